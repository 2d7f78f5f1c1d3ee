"use client";

import { onMenuKeyDown, usePopover } from "@/components/shared/use-popover";
import type { CheckpointView } from "@/server/protocol";
import type { RewindMode } from "@/components/review/rewind-api";

/** What a page may do with a checkpoint: a page that may not rewind or fork has no such item. */
export interface CheckpointActions {
  diff(checkpoint: CheckpointView): void;
  rewind?(checkpoint: CheckpointView, mode: RewindMode): void;
  fork?(checkpoint: CheckpointView, worktree: boolean): void;
}

interface MenuItem {
  label: string;
  run: () => void;
  enabled: boolean;
  id: string;
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
  const { open, toggle, close, root, panel, trigger } = usePopover();

  const items = menuItems(checkpoint, actions, running);
  return (
    <div ref={root} className="relative">
      <button
        ref={trigger}
        type="button"
        className="rounded px-1.5 text-muted hover:bg-raised hover:text-fg disabled:opacity-50 max-md:min-h-[44px] max-md:min-w-[44px]"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label={`Actions for checkpoint #${checkpoint.number}`}
        disabled={disabled}
        onClick={toggle}
        onKeyDown={(event) => {
          // The menu pattern: Down (or Enter/Space, by click) opens it on its first item.
          if (event.key === "ArrowDown" && !open) {
            event.preventDefault();
            toggle();
          }
        }}
        data-testid={testId}
      >
        ⋯
      </button>
      {open ? (
        <ul
          ref={panel as React.RefObject<HTMLUListElement>}
          role="menu"
          aria-label={`Checkpoint #${checkpoint.number}`}
          onKeyDown={onMenuKeyDown}
          className="absolute right-0 top-full z-20 mt-0.5 w-56 rounded-md border border-border bg-raised py-1 shadow-lg"
        >
          {items.map((item) => (
            <li key={item.id} role="none">
              <button
                type="button"
                role="menuitem"
                disabled={!item.enabled}
                className="w-full px-3 py-1 text-left hover:bg-accent/20 disabled:opacity-40"
                tabIndex={-1}
                onClick={() => {
                  close();
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

function menuItems(checkpoint: CheckpointView, actions: CheckpointActions, running: boolean): MenuItem[] {
  const files = checkpoint.has_snapshot;
  const items: MenuItem[] = [{ id: "diff", label: "Diff to now", run: () => actions.diff(checkpoint), enabled: files }];
  const { rewind, fork } = actions;
  if (rewind)
    items.push(
      {
        id: "rewind-both",
        label: "Rewind conversation + files",
        run: () => rewind(checkpoint, "both"),
        enabled: files && !running,
      },
      {
        id: "rewind-conversation",
        label: "Rewind conversation only",
        run: () => rewind(checkpoint, "conversation"),
        enabled: !running,
      },
      {
        id: "rewind-files",
        label: "Rewind files only",
        run: () => rewind(checkpoint, "files"),
        enabled: files && !running,
      },
    );
  if (fork)
    items.push(
      { id: "fork", label: "Fork a new session here", run: () => fork(checkpoint, false), enabled: files },
      { id: "fork-worktree", label: "Fork onto a git worktree", run: () => fork(checkpoint, true), enabled: files },
    );
  return items;
}
