import type { EventEnvelope, Notice, NoticeType, TurnOutcome } from "../protocol";
import { redactSecrets } from "../secrets";

/** A notice before it is addressed: `key` names the event, so each device gets it once. */
export interface PendingNotice {
  key: string;
  type: NoticeType;
  summary: string;
  approval_id?: string;
  tool?: string;
}

/** A summary fits a phone's lock screen; the rest is one tap away. */
const SUMMARY_CHARS = 160;

const ENDINGS: Record<TurnOutcome, { failed: boolean; text: string }> = {
  completed: { failed: false, text: "Finished." },
  cancelled: { failed: false, text: "Cancelled." },
  rejected: { failed: false, text: "Stopped after a rejection." },
  error: { failed: true, text: "Failed" },
  interrupted: { failed: true, text: "Interrupted." },
  max_steps: { failed: true, text: "Stopped at the step limit." },
  loop_detected: { failed: true, text: "Stopped: the same call kept repeating." },
};

/** What a session event is worth telling someone away from the page, or null. */
export function noticeOf(event: EventEnvelope): PendingNotice | null {
  if (event.type === "approval.requested") {
    const { approvalId, tool, description, kind } = event.payload;
    const type: NoticeType =
      kind === "password" ? "password.requested" : tool === "budget" ? "budget.requested" : "approval.requested";
    const lead =
      type === "password.requested"
        ? "A password is asked for"
        : type === "budget.requested"
          ? "The budget is spent"
          : `${tool} waits for approval`;
    return {
      key: `approval:${approvalId}`,
      type,
      summary: summarize(`${lead}: ${description}`),
      approval_id: approvalId,
      tool,
    };
  }
  if (event.type === "turn.completed") {
    const { turnId, outcome, message } = event.payload;
    const ending = ENDINGS[outcome];
    const text = outcome === "error" ? `Failed: ${message ?? "the turn ended in an error"}` : ending.text;
    return { key: `turn:${turnId}`, type: ending.failed ? "turn.failed" : "turn.completed", summary: summarize(text) };
  }
  return null;
}

/** A routine run's end (server/routines calls the notifier with it). */
export function routineNotice(run: {
  runId: string;
  routine: string;
  failed: boolean;
  summary?: string;
}): PendingNotice {
  const text = run.summary ?? (run.failed ? "The run failed." : "The run finished.");
  return {
    key: `routine-run:${run.runId}`,
    type: run.failed ? "routine.failed" : "routine.completed",
    summary: summarize(`${run.routine}: ${text}`),
  };
}

/** Actions a notice can carry: only a request that Allow or Reject decides. */
export function decidable(notice: PendingNotice): boolean {
  return notice.type === "approval.requested" || notice.type === "budget.requested";
}

export function addressed(notice: PendingNotice, sessionId: string, title: string, actionToken?: string): Notice {
  return {
    type: notice.type,
    session_id: sessionId,
    title,
    summary: notice.summary,
    ...(notice.approval_id ? { approval_id: notice.approval_id } : {}),
    ...(notice.tool ? { tool: notice.tool } : {}),
    ...(actionToken ? { action_token: actionToken } : {}),
  };
}

function summarize(text: string): string {
  const line = redactSecrets(text).replace(/\s+/g, " ").trim();
  return line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line;
}
