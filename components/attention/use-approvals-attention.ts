"use client";

import { useEffect } from "react";
import { onNewRequest } from "@/components/shared/approvals-store";
import { accessOf, canDrive } from "@/components/shared/use-access";
import { playChime } from "./chime";
import { approvalSubject } from "./describe";
import { effectivePrefs } from "./prefs";
import { isAway, showNotification } from "./notify";
import { revealApproval } from "./reveal";

/**
 * /approvals: every session's new requests this page may decide call for attention while the tab
 * is in the background. A request it can only watch (view access on a hub) stays quiet: its card
 * shows it waiting for someone who may decide.
 */
export function useApprovalsAttention(): void {
  useEffect(
    () =>
      onNewRequest(async (approval) => {
        if (!isAway() || !canDrive(await accessOf(approval.session_id))) return;
        // The session's own choice wins here too: a muted session stays quiet everywhere.
        const prefs = effectivePrefs(approval.session_id);
        const shown =
          prefs.notify &&
          (await showNotification({
            title: `Approval needed · ${approval.session_title}`,
            body: approvalSubject(approval),
            tag: `approval:${approval.approval_id}`,
            onClick: () => revealApproval(approval.approval_id),
          }));
        if (prefs.sound && (shown || !prefs.notify)) playChime();
      }),
    [],
  );
}
