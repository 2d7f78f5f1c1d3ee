"use client";

import { useEffect } from "react";
import { command } from "@/components/transport/client";
import { isAway } from "./notify";
import { revealApproval } from "./reveal";

/**
 * Tells the bridge whether this tab shows the session in a visible, focused window, so nobody is
 * pushed about what they are watching (server/notify). Said again whenever the tab goes live
 * (after a reconnect the bridge has forgotten it) and on every focus or visibility change.
 */
export function useFocusReport(sessionId: string, live: boolean): void {
  useEffect(() => {
    if (!live) return;
    let last: boolean | null = null;
    const report = () => {
      const focused = !isAway();
      if (focused === last) return;
      last = focused;
      // Best effort: a lost report only means a push that was not needed, or one less.
      void command("presence.focus", { sessionId, focused }).catch(() => (last = null));
    };
    report();
    const events = ["focus", "blur", "pagehide"] as const;
    for (const name of events) window.addEventListener(name, report);
    document.addEventListener("visibilitychange", report);
    return () => {
      for (const name of events) window.removeEventListener(name, report);
      document.removeEventListener("visibilitychange", report);
    };
  }, [sessionId, live]);
}

/**
 * A notification opened this session on a request (`/s/<id>?approval=<id>`, or a message from the
 * service worker to a tab already open): scroll to it, its diff or command in view.
 */
export function usePushLanding(live: boolean): void {
  useEffect(() => {
    if (!live) return;
    const approvalId = new URLSearchParams(window.location.search).get("approval");
    if (approvalId) revealApproval(approvalId);
    const worker = "serviceWorker" in navigator ? navigator.serviceWorker : null;
    const onMessage = (event: MessageEvent) => {
      const data = event.data as { type?: unknown; approvalId?: unknown } | null;
      if (data?.type === "worldline.reveal-approval" && typeof data.approvalId === "string")
        revealApproval(data.approvalId);
    };
    worker?.addEventListener("message", onMessage);
    return () => worker?.removeEventListener("message", onMessage);
  }, [live]);
}
