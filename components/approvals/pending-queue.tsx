"use client";

import { useEffect, useState, type KeyboardEvent } from "react";
import type { ApprovalView } from "@/server/protocol";
import { ApprovalCard, fromView } from "./approval-card";

/** The controls a decision key presses, in the focused request's card. */
const DECISION_KEYS: Record<string, string> = {
  a: '[data-testid="approval-allow-once"]',
  s: '[data-testid="approval-allow-session"]',
  r: '[data-testid="approval-reject"]',
};
const FEEDBACK = '[data-testid="approval-feedback"], [data-testid="approval-password"]';

/**
 * The live queue, oldest first, with the keys of the "approvals" group of
 * components/shell/shortcuts.json: j/k move, a allows once, s allows for the session,
 * r rejects (with the feedback typed, if any), f focuses the feedback field. Keys act only while
 * the keyboard is on a request (Tab to it, or click it), never while typing in a field: a single
 * letter typed anywhere else on the page must not decide (WCAG 2.1.4).
 */
export function PendingQueue({ pending }: { pending: ApprovalView[] }) {
  const [activeId, setActiveId] = useState<string | null>(null);
  const index = Math.max(
    0,
    pending.findIndex((approval) => approval.approval_id === activeId),
  );
  const active = pending[index];

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.metaKey || event.ctrlKey || event.altKey || !active) return;
    const target = event.target as HTMLElement;
    if (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable) return;
    const card = document.querySelector<HTMLElement>(`[data-queue-item="${active.approval_id}"]`);
    if (event.key === "j" || event.key === "k") {
      const next = pending[Math.min(pending.length - 1, Math.max(0, index + (event.key === "j" ? 1 : -1)))];
      setActiveId(next.approval_id);
      // The keyboard goes along, so the next key acts on the request now shown as active.
      document.querySelector<HTMLElement>(`[data-queue-item="${next.approval_id}"]`)?.focus();
    } else if (DECISION_KEYS[event.key]) {
      card?.querySelector<HTMLButtonElement>(DECISION_KEYS[event.key])?.click();
    } else if (event.key === "f") {
      card?.querySelector<HTMLElement>(FEEDBACK)?.focus();
    } else return;
    event.preventDefault();
  };

  useEffect(() => {
    if (active)
      document.querySelector(`[data-approval-id="${active.approval_id}"]`)?.scrollIntoView({ block: "nearest" });
  }, [active]);

  if (pending.length === 0) {
    return (
      <p className="py-12 text-center text-muted" data-testid="approvals-empty">
        Nothing waits for you. Requests from every session appear here the moment the agent asks.
      </p>
    );
  }
  return (
    <div className="flex flex-col gap-3" data-testid="approvals-pending" onKeyDown={onKeyDown}>
      {pending.map((approval) => (
        <div
          key={approval.approval_id}
          // Focusable by click and by j/k (not by Tab, which reaches the card's own controls).
          tabIndex={-1}
          className="rounded-md"
          data-queue-item={approval.approval_id}
          onFocusCapture={() => setActiveId(approval.approval_id)}
          onClick={() => setActiveId(approval.approval_id)}
        >
          <ApprovalCard
            approval={fromView(approval)}
            active={approval.approval_id === active?.approval_id}
            showSession
          />
        </div>
      ))}
    </div>
  );
}
