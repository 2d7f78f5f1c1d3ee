"use client";

import { useState } from "react";
import { BUTTON } from "./buttons";
import { CommitDialog, MergeDialog, PushDialog, type ShipTarget } from "./ship-dialogs";

type ShipAction = "commit" | "merge" | "push";

const ACTIONS: { action: ShipAction; label: string }[] = [
  { action: "commit", label: "Commit" },
  { action: "merge", label: "Merge" },
  { action: "push", label: "Push" },
];

/**
 * Commit, Merge and Push for a worktree session outside the board (the session's Changes view):
 * the same dialogs the board's cards open. Disabled while a turn runs, as on the card; what the
 * bridge refuses (nothing to commit or merge) each dialog says.
 */
export function ShipBar({ target, running }: { target: ShipTarget; running: boolean }) {
  const [open, setOpen] = useState<ShipAction | null>(null);
  const props = { card: target, open: true, onClose: () => setOpen(null) };
  return (
    <>
      <span className="flex gap-1" role="group" aria-label={`Ship ${target.worktree?.branch ?? "the work"}`}>
        {ACTIONS.map(({ action, label }) => (
          <button
            key={action}
            type="button"
            className={BUTTON}
            disabled={running}
            title={`${label} the worktree's work (branch ${target.worktree?.branch ?? ""})`}
            onClick={() => setOpen(action)}
            data-testid={`changes-${action}`}
          >
            {label}
          </button>
        ))}
      </span>
      {open === "commit" ? <CommitDialog {...props} /> : null}
      {open === "merge" ? <MergeDialog {...props} /> : null}
      {open === "push" ? <PushDialog {...props} /> : null}
    </>
  );
}
