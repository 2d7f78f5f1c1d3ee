"use client";

import { useState } from "react";
import type { PendingApproval } from "@/server/protocol";
import { getSocket } from "@/components/transport/client";

/**
 * Approve or reject right in the transcript. The approvals engineer's
 * components/approvals/approval-card.tsx is the full card; until it lands this
 * sends the same `approval.decide` command.
 */
export function InlineApproval({ approval }: { approval: PendingApproval }) {
  const [error, setError] = useState<string | null>(null);
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  const decide = async (decision: "allow_once" | "allow_session" | "reject") => {
    setBusy(true);
    setError(null);
    try {
      const ack = (await getSocket()
        .timeout(15_000)
        .emitWithAck("approval.decide", { commandId: crypto.randomUUID(), approvalId: approval.approvalId, decision, feedback: feedback || undefined })) as {
        ok: boolean;
        error?: { message: string };
      };
      if (!ack.ok) setError(ack.error?.message ?? "The decision was not accepted.");
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="mx-3 mb-2 flex flex-col gap-1.5 rounded border border-warn/40 bg-warn/5 p-2 font-sans" data-testid="inline-approval">
      <div className="text-fg">
        <span className="mr-2 rounded bg-warn/20 px-1 text-[11px] uppercase text-warn">{approval.riskLevel}</span>
        {approval.description}
      </div>
      <input
        className="rounded border border-border bg-bg px-2 py-1 text-xs outline-none focus:border-accent"
        placeholder="Feedback for the agent (optional, sent with Reject)"
        value={feedback}
        onChange={(event) => setFeedback(event.target.value)}
        aria-label="Feedback"
      />
      <div className="flex flex-wrap gap-1.5">
        <button type="button" disabled={busy} className="rounded bg-ok/20 px-2 py-1 text-ok hover:bg-ok/30" onClick={() => void decide("allow_once")} data-testid="approve-once">
          Allow once
        </button>
        <button type="button" disabled={busy} className="rounded bg-raised px-2 py-1 hover:text-accent" onClick={() => void decide("allow_session")} data-testid="approve-session">
          Allow for session
        </button>
        <button type="button" disabled={busy} className="rounded bg-danger/15 px-2 py-1 text-danger hover:bg-danger/25" onClick={() => void decide("reject")} data-testid="reject">
          Reject
        </button>
      </div>
      {error ? <div className="text-danger">{error}</div> : null}
    </div>
  );
}
