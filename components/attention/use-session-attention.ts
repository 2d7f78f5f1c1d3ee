"use client";

import { useEffect, useRef } from "react";
import { checkedEvents } from "@/components/shared/checked-events";
import { onMessage } from "@/components/transport/client";
import { canDrive, DECIDED_BY_OTHERS, useAccess } from "@/components/shared/use-access";
import { playChime } from "./chime";
import { approvalSubject, turnEnding } from "./describe";
import { effectivePrefs } from "./prefs";
import { isAway, showNotification } from "./notify";
import { REVEAL_EVENT, revealApproval } from "./reveal";
import { noteUnseenEnding } from "./tab-badge";

/**
 * The session page's attention: while the tab is hidden or unfocused, a waiting approval
 * and a turn that ended or failed raise a notification (naming the session and the command
 * or file), an optional chime, and, for endings, the tab's count. A page that may not decide
 * (a view-only link) is told the request waits for someone else. Only live events count:
 * the catch-up a tab gets when it opens or reconnects is history, not news.
 */
export function useSessionAttention(sessionId: string, title: string | undefined, onReveal: () => void) {
  const titleRef = useRef(title);
  titleRef.current = title;
  const revealRef = useRef(onReveal);
  revealRef.current = onReveal;
  const access = useAccess(sessionId);
  const decidesRef = useRef(canDrive(access));
  decidesRef.current = canDrive(access);

  useEffect(() => {
    const reveal = () => revealRef.current();
    window.addEventListener(REVEAL_EVENT, reveal);
    return () => window.removeEventListener(REVEAL_EVENT, reveal);
  }, []);

  useEffect(() => {
    /** The turn's latest answer text, for the "finished" notification. */
    let answer = { messageId: "", text: "" };
    const alert = async (notice: { title: string; body: string; tag: string; onClick: () => void }) => {
      const prefs = effectivePrefs(sessionId);
      const shown = prefs.notify && (await showNotification(notice));
      // The chime goes with the notification (once across tabs), or alone when notifications are off.
      if (prefs.sound && (shown || !prefs.notify)) playChime();
    };
    const name = () => titleRef.current ?? "Session";
    const offEvents = onMessage("session.events", (message) => {
      if (message.sessionId !== sessionId) return;
      // The session's transcript (useSession) reports a drifted event; here it is only left out.
      for (const event of checkedEvents(message.events, () => undefined)) {
        if (event.type === "message.part.delta") {
          const { messageId, part, delta } = event.payload;
          if (part !== "text") continue;
          answer =
            messageId === answer.messageId ? { messageId, text: answer.text + delta } : { messageId, text: delta };
          continue;
        }
        if (!isAway()) continue;
        if (event.type === "approval.requested") {
          const { approvalId } = event.payload;
          const decides = decidesRef.current;
          void alert({
            title: `${decides ? "Approval needed" : "Waiting for approval"} · ${name()}`,
            body: decides
              ? approvalSubject(event.payload)
              : `${approvalSubject(event.payload)} (decided by ${DECIDED_BY_OTHERS})`,
            tag: `approval:${approvalId}`,
            onClick: () => revealApproval(approvalId),
          });
        } else if (event.type === "turn.completed") {
          const ending = turnEnding(event.payload, answer.text);
          if (!ending) continue;
          noteUnseenEnding();
          void alert({
            title: `${ending.failed ? "Turn failed" : "Turn finished"} · ${name()}`,
            body: ending.body,
            tag: `turn:${event.payload.turnId}`,
            onClick: () => revealApproval(null),
          });
        }
      }
    });
    return offEvents;
  }, [sessionId]);
}
