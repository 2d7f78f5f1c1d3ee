"use client";

import { useState } from "react";
import type { ApprovalDecisionKind, ApprovalView, PendingApproval } from "@/server/protocol";
import { BridgeError, command } from "@/components/transport/client";
import { canDrive, DECIDED_BY_OTHERS, useAccess } from "@/components/shared/use-access";
import { RiskBadge } from "./risk-badge";

/** What the card shows; built from an ApprovalView (queue) or a PendingApproval (transcript). */
export interface ApprovalCardData {
  id: string;
  tool: string;
  args: unknown;
  description: string;
  riskLevel: string;
  kind: "tool" | "password";
  diff?: string | null;
  /** The tool card around it already shows the arguments and diff: the card only decides. */
  detailsShownAbove?: boolean;
  scope?: string | null;
  status?: string;
  sessionId?: string;
  sessionTitle?: string;
  workspace?: string;
  createdAt?: string;
}

export function fromView(view: ApprovalView): ApprovalCardData {
  return {
    id: view.approval_id,
    tool: view.tool,
    args: view.args,
    description: view.description,
    riskLevel: view.risk_level,
    kind: view.kind,
    diff: view.diff,
    scope: view.scope,
    status: view.status,
    sessionId: view.session_id,
    sessionTitle: view.session_title,
    workspace: view.workspace,
    createdAt: view.created_at,
  };
}

export function fromPending(approval: PendingApproval): ApprovalCardData {
  return { ...approval, id: approval.approvalId };
}

/**
 * One approval request with every decision: allow once, allow for this session
 * (showing the exact pattern it records), reject, reject with feedback — or,
 * for sudo, a password field. Usable in the /approvals queue and inline in a
 * session's transcript; a decision made elsewhere first shows as a conflict. A page that may not
 * decide (a view-only share link) sees the request waiting and who decides it, and no control.
 */
export function ApprovalCard({
  approval,
  active = false,
  showSession = false,
}: {
  approval: ApprovalCardData;
  active?: boolean;
  showSession?: boolean;
}) {
  const [feedback, setFeedback] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const access = useAccess(approval.sessionId);

  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      const conflict = err instanceof BridgeError && err.code === "approval:already_decided";
      setError(conflict ? `Already decided: ${err.message}` : err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  const decide = (decision: ApprovalDecisionKind) =>
    run(() =>
      command("approval.decide", {
        approvalId: approval.id,
        decision,
        feedback: decision === "reject" && feedback.trim() ? feedback.trim() : undefined,
      }),
    );
  const answer = (value: string | null) =>
    run(() => command("approval.password", { approvalId: approval.id, password: value }));
  const command_ = commandLine(approval.args);

  return (
    <article
      className={`flex flex-col gap-2 rounded-md border bg-panel p-3 ${active ? "border-accent" : "border-border"}`}
      data-testid="approval-card"
      data-approval-id={approval.id}
      data-active={active ? "true" : "false"}
      aria-current={active ? "true" : undefined}
    >
      <header className="flex flex-wrap items-center gap-2 text-xs">
        <RiskBadge level={approval.riskLevel} />
        <span className="font-mono text-accent">{approval.kind === "password" ? "sudo password" : approval.tool}</span>
        {showSession && approval.sessionId ? (
          <a
            href={`/s/${approval.sessionId}`}
            className="truncate text-fg hover:underline"
            data-testid="approval-session"
          >
            {approval.sessionTitle ?? approval.sessionId}
          </a>
        ) : null}
        {showSession && approval.workspace ? (
          <span className="truncate font-mono text-muted" title={approval.workspace}>
            {approval.workspace}
          </span>
        ) : null}
        {approval.createdAt ? (
          <time className="ml-auto text-muted">{new Date(approval.createdAt).toLocaleTimeString()}</time>
        ) : null}
      </header>
      <p className="text-fg" data-testid="approval-description">
        {approval.description}
      </p>
      {command_ ? (
        <pre
          className="overflow-x-auto whitespace-pre-wrap break-all rounded bg-bg px-2 py-1 font-mono text-xs"
          data-testid="approval-command"
        >
          {command_}
        </pre>
      ) : approval.kind === "tool" && !approval.detailsShownAbove ? (
        <pre className="max-h-40 overflow-auto whitespace-pre-wrap break-all rounded bg-bg px-2 py-1 font-mono text-xs text-muted">
          {JSON.stringify(approval.args, null, 2)}
        </pre>
      ) : null}
      {approval.diff && !approval.detailsShownAbove ? <DiffBlock diff={approval.diff} /> : null}

      {!canDrive(access) ? (
        <p className="text-xs text-warn" role="status" data-testid="approval-waiting">
          {access
            ? `Waiting for ${DECIDED_BY_OTHERS} to decide. You can only view this session.`
            : "Waiting for a decision."}
        </p>
      ) : approval.kind === "password" ? (
        <form
          className="flex flex-wrap gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            if (password) void answer(password).then(() => setPassword(""));
          }}
        >
          <input
            type="password"
            autoComplete="off"
            className="min-w-0 flex-1 rounded border border-border bg-bg px-2 py-1 outline-none focus:border-accent"
            placeholder="Password (sent to sudo only; never stored)"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            aria-label="sudo password"
            data-testid="approval-password"
          />
          <button
            type="submit"
            disabled={busy || !password}
            className="rounded bg-ok/20 px-3 py-1 text-ok hover:bg-ok/30"
            data-testid="approval-password-submit"
          >
            Send
          </button>
          <button
            type="button"
            disabled={busy}
            className="rounded bg-danger/15 px-3 py-1 text-danger hover:bg-danger/25"
            onClick={() => void answer(null)}
            data-testid="approval-password-decline"
          >
            Decline
          </button>
        </form>
      ) : (
        <>
          <textarea
            rows={1}
            className="resize-y rounded border border-border bg-bg px-2 py-1 text-xs outline-none focus:border-accent"
            placeholder="Feedback for the agent (optional; with Reject it continues from your note)"
            value={feedback}
            onChange={(event) => setFeedback(event.target.value)}
            aria-label="Feedback for the agent"
            data-testid="approval-feedback"
          />
          {/* On a phone: full-width buttons held at the bottom of the screen while the card is in view (one thumb). */}
          <div
            className="flex flex-wrap gap-2 max-sm:sticky max-sm:bottom-0 max-sm:z-10 max-sm:-mx-3 max-sm:-mb-3 max-sm:grid max-sm:grid-cols-2 max-sm:rounded-b-md max-sm:border-t max-sm:border-border max-sm:bg-panel max-sm:p-2 max-sm:pb-[max(0.5rem,env(safe-area-inset-bottom))]"
            data-testid="approval-actions"
          >
            <button
              type="button"
              disabled={busy}
              className="rounded bg-ok/20 px-3 py-1.5 text-ok hover:bg-ok/30 max-sm:order-2 max-sm:min-h-[44px] max-sm:text-base"
              onClick={() => void decide("allow_once")}
              data-testid="approval-allow-once"
            >
              Allow once <kbd className="ml-1 text-[10px]">a</kbd>
            </button>
            <button
              type="button"
              disabled={busy || !approval.scope}
              className="rounded bg-raised px-3 py-1.5 hover:text-accent disabled:opacity-50 max-sm:order-1 max-sm:col-span-2 max-sm:truncate"
              onClick={() => void decide("allow_session")}
              title={approval.scope ? `Records an allow rule for ${approval.tool}: ${approval.scope}` : undefined}
              data-testid="approval-allow-session"
            >
              Allow for session
              {approval.scope ? <code className="ml-1 text-xs text-muted">{approval.scope}</code> : null}{" "}
              <kbd className="ml-1 text-[10px]">s</kbd>
            </button>
            <button
              type="button"
              disabled={busy}
              className="rounded bg-danger/15 px-3 py-1.5 text-danger hover:bg-danger/25 max-sm:order-3 max-sm:min-h-[44px] max-sm:text-base"
              onClick={() => void decide("reject")}
              data-testid="approval-reject"
            >
              {feedback.trim() ? "Reject with feedback" : "Reject"} <kbd className="ml-1 text-[10px]">r</kbd>
            </button>
          </div>
        </>
      )}
      {error ? (
        <p className="text-xs text-danger" role="alert" data-testid="approval-error">
          {error}
        </p>
      ) : null}
    </article>
  );
}

function DiffBlock({ diff }: { diff: string }) {
  return (
    <pre className="max-h-72 overflow-auto rounded bg-bg px-2 py-1 font-mono text-xs" data-testid="approval-diff">
      {diff.split("\n").map((line, index) => (
        <div
          key={index}
          className={
            line.startsWith("+") && !line.startsWith("+++")
              ? "text-ok"
              : line.startsWith("-") && !line.startsWith("---")
                ? "text-danger"
                : "text-muted"
          }
        >
          {line || " "}
        </div>
      ))}
    </pre>
  );
}

function commandLine(args: unknown): string | null {
  if (
    typeof args === "object" &&
    args !== null &&
    "command" in args &&
    typeof (args as { command: unknown }).command === "string"
  ) {
    return (args as { command: string }).command;
  }
  return null;
}
