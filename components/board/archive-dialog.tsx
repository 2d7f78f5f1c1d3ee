"use client";

import { useState } from "react";
import type { BoardCard } from "@/server/protocol";
import { Modal } from "@/components/shared/modal";
import { PRIMARY } from "./buttons";
import { archiveSession, wouldLose } from "./fleet-api";
import { useAction } from "./use-action";

/**
 * Archiving a card: a worktree is checkpointed and removed, its branch kept. The bridge refuses
 * (409 `worktree:unmerged`) while work would be lost; the dialog then lists exactly what, and
 * offers to archive anyway: the checkpoint still brings it back with Restore.
 */
export function ArchiveDialog({ card, open, onClose }: { card: BoardCard; open: boolean; onClose: () => void }) {
  const [archived, setArchived] = useState(false);
  const action = useAction();
  const lost = wouldLose(action.error);
  const archive = async (force: boolean) => {
    const ok = await action.run(async () => (await archiveSession(card, force), true));
    if (ok) setArchived(true);
  };
  return (
    <Modal open={open} onClose={onClose} title={`Archive “${card.title}”`} testId="archive-dialog">
      {archived ? (
        <p role="status" data-testid="archive-result">
          Archived. {card.worktree ? "Its branch is kept; Restore brings the folder back as it was." : ""}
        </p>
      ) : lost ? (
        <div role="alert" className="flex flex-col gap-2" data-testid="archive-unmerged">
          <p className="text-danger">{errorText(action.error)}</p>
          {lost.length ? (
            <>
              <p>This work is neither merged nor pushed:</p>
              <ul
                className="max-h-48 list-inside list-disc overflow-y-auto font-mono text-xs"
                data-testid="archive-lost"
              >
                {lost.map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </>
          ) : null}
          <p className="text-xs text-muted">Archiving anyway keeps a checkpoint: Restore brings every file back.</p>
          <button
            type="button"
            className={`${PRIMARY} self-start bg-danger`}
            disabled={action.busy}
            onClick={() => void archive(true)}
            data-testid="archive-force"
          >
            Archive anyway
          </button>
        </div>
      ) : (
        <div className="flex flex-col gap-2">
          <p>
            {card.worktree ? (
              <>
                Removes the worktree folder and keeps the branch{" "}
                <code className="font-mono">{card.worktree.branch}</code>, after a checkpoint.
              </>
            ) : (
              "Files the session away; its folder is not touched."
            )}
          </p>
          <button
            type="button"
            className={`${PRIMARY} self-start`}
            disabled={action.busy}
            onClick={() => void archive(false)}
            data-autofocus
            data-testid="archive-submit"
          >
            Archive
          </button>
          {action.message ? (
            <p role="alert" className="text-danger" data-testid="archive-error">
              {action.message}
            </p>
          ) : null}
        </div>
      )}
    </Modal>
  );
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
