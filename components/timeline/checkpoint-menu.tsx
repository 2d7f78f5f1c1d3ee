"use client";

import { useEffect, useRef, useState } from "react";
import type { CheckpointView } from "@/server/protocol";
import type { RewindMode } from "@/components/review/rewind-api";

export interface CheckpointActions {
  diff(checkpoint: CheckpointView): void;
  rewind(checkpoint: CheckpointView, mode: RewindMode): void;
  fork(checkpoint: CheckpointView, worktree: boolean): void;
}

/** One "⋯" button per row; the actions on a checkpoint live in its menu instead of a row of buttons. */
export function CheckpointMenu({
  checkpoint,
  actions,
  disabled,
  running,
  testId,
}: {
  checkpoint: CheckpointView;
  actions: CheckpointActions;
  disabled: boolean;
  running: boolean;
  testId: string;
}) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const close = (event: MouseEvent) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    const escape = (event: KeyboardEvent) => event.key === "Escape" && setOpen(false);
    document.addEventListener("mousedown", close);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("mousedown", close);
      document.removeEventListener("keydown", escape);
    };
  }, [open]);

  const files = checkpoint.has_snapshot;
  const items: { label: string; run: () => void; enabled: boolean; id: string }[] = [
    { id: "diff", label: "Diff to now", run: () => actions.diff(checkpoint), enabled: files },
    {
      id: "rewind-both",
      label: "Rewind conversation + files",
      run: () => actions.rewind(checkpoint, "both"),
      enabled: files && !running,
    },
    {
      id: "rewind-conversation",
      label: "Rewind conversation only",
      run: () => actions.rewind(checkpoint, "conversation"),
      enabled: !running,
    },
    {
      id: "rewind-files",
      label: "Rewind files only",
      run: () => actions.rewind(checkpoint, "files"),
      enabled: files && !running,
    },
    { id: "fork", label: "Fork a new session here", run: () => actions.fork(checkpoint, false), enabled: files },
    {
      id: "fork-worktree",
      label: "Fork onto a git worktree",
      run: () => actions.fork(checkpoint, true),
      enabled: files,
    },
  ];
  return (
    <div ref={root} className="relative">
      <button
        type="button"
        className="rounded px-1.5 text-muted hover:bg-raised hover:text-fg disabled:opacity-50"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label={`Actions for checkpoint #${checkpoint.number}`}
        disabled={disabled}
        onClick={() => setOpen(!open)}
        data-testid={testId}
      >
        ⋯
      </button>
      {open ? (
        <ul
          role="menu"
          className="absolute right-0 top-full z-20 mt-0.5 w-56 rounded-md border border-border bg-raised py-1 shadow-lg"
        >
          {items.map((item) => (
            <li key={item.id} role="none">
              <button
                type="button"
                role="menuitem"
                disabled={!item.enabled}
                className="w-full px-3 py-1 text-left hover:bg-accent/20 disabled:opacity-40"
                onClick={() => {
                  setOpen(false);
                  item.run();
                }}
                data-testid={`menu-${item.id}`}
              >
                {item.label}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
