"use client";

import { useEffect, useState } from "react";
import type { ApprovalView } from "@/server/protocol";
import { ApprovalCard, fromView } from "./approval-card";

/**
 * The live queue, oldest first, with keyboard control: j/k move, a allows once,
 * s allows for the session, r rejects (with the feedback typed, if any), f
 * focuses the feedback field. Keys are ignored while typing in a field.
 */
export function PendingQueue({ pending }: { pending: ApprovalView[] }) {
  const [activeId, setActiveId] = useState<string | null>(null);
  const index = Math.max(
    0,
    pending.findIndex((approval) => approval.approval_id === activeId),
  );
  const active = pending[index];

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.metaKey || event.ctrlKey || event.altKey) return;
      const target = event.target as HTMLElement | null;
      if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable)) return;
      if (!active) return;
      const move = (delta: number) =>
        setActiveId(pending[Math.min(pending.length - 1, Math.max(0, index + delta))]?.approval_id ?? null);
      const card = document.querySelector<HTMLElement>(`[data-approval-id="${active.approval_id}"]`);
      switch (event.key) {
        case "j":
          move(1);
          break;
        case "k":
          move(-1);
          break;
        case "a":
          card?.querySelector<HTMLButtonElement>('[data-testid="approval-allow-once"]')?.click();
          break;
        case "s":
          card?.querySelector<HTMLButtonElement>('[data-testid="approval-allow-session"]')?.click();
          break;
        case "r":
          card?.querySelector<HTMLButtonElement>('[data-testid="approval-reject"]')?.click();
          break;
        case "f":
          card
            ?.querySelector<HTMLElement>('[data-testid="approval-feedback"], [data-testid="approval-password"]')
            ?.focus();
          break;
        default:
          return;
      }
      event.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [active, index, pending]);

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
    <div className="flex flex-col gap-3" data-testid="approvals-pending">
      {pending.map((approval) => (
        <div
          key={approval.approval_id}
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

/** The keyboard help shown above the queue. */
export const SHORTCUTS: { key: string; label: string }[] = [
  { key: "a", label: "allow once" },
  { key: "s", label: "allow for session" },
  { key: "r", label: "reject" },
  { key: "f", label: "feedback" },
  { key: "j / k", label: "next / previous" },
];
