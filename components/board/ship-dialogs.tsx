"use client";

import { useState } from "react";
import type { BoardCard } from "@/server/protocol";
import { Modal } from "@/components/shared/modal";
import { PRIMARY } from "./buttons";
import {
  commitSession,
  conflictPaths,
  mergeSession,
  pushSession,
  resolveConflict,
  type MergeStrategy,
  type Pushed,
} from "./fleet-api";
import { useAction } from "./use-action";

/**
 * Shipping a worktree's work: commit, merge into the base, push. Opened from a board card and from
 * the session's Changes view (ship-bar.tsx), so they need only what both know of the session.
 */
export type ShipTarget = Pick<BoardCard, "id" | "title" | "worktree">;

interface DialogProps {
  card: ShipTarget;
  open: boolean;
  onClose: () => void;
}

export function CommitDialog({ card, open, onClose }: DialogProps) {
  const [message, setMessage] = useState("");
  const [done, setDone] = useState<{ sha: string; message: string } | null>(null);
  const action = useAction();
  const commit = async () => {
    const result = await action.run(() => commitSession(card.id, message));
    if (result) setDone(result);
  };
  return (
    <Modal open={open} onClose={onClose} title={`Commit “${card.title}”`} testId="commit-dialog">
      {done ? (
        <p role="status" data-testid="commit-result">
          Committed <code className="font-mono">{done.sha.slice(0, 10)}</code> on{" "}
          <code className="font-mono">{card.worktree?.branch}</code>: {done.message}
        </p>
      ) : (
        <form
          className="flex flex-col gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            void commit();
          }}
        >
          <label htmlFor="commit-message" className="text-xs text-muted">
            Message (leave empty and the model writes it from the diff)
          </label>
          <textarea
            id="commit-message"
            rows={4}
            className="rounded border border-border bg-bg px-2 py-1 font-mono outline-none focus:border-accent"
            value={message}
            onChange={(event) => setMessage(event.target.value)}
            data-autofocus
            data-testid="commit-message"
          />
          <button type="submit" className={`${PRIMARY} self-start`} disabled={action.busy} data-testid="commit-submit">
            {action.busy ? "Committing…" : "Commit"}
          </button>
        </form>
      )}
      {action.message ? (
        <p role="alert" className="text-danger" data-testid="commit-error">
          {action.message}
        </p>
      ) : null}
    </Modal>
  );
}

export function MergeDialog({ card, open, onClose }: DialogProps) {
  const [strategy, setStrategy] = useState<MergeStrategy>("squash");
  const [sha, setSha] = useState<string | null>(null);
  const [asked, setAsked] = useState(false);
  const action = useAction();
  const resolving = useAction();
  const conflict = conflictPaths(action.error);
  const merge = async () => {
    const result = await action.run(() => mergeSession(card.id, strategy));
    if (result) setSha(result.sha);
  };
  const resolve = async () => {
    const ok = await resolving.run(async () => (await resolveConflict(card.id), true));
    if (ok) setAsked(true);
  };
  const base = card.worktree?.base ?? "the base branch";
  return (
    <Modal open={open} onClose={onClose} title={`Merge “${card.title}” into ${base}`} testId="merge-dialog">
      {sha ? (
        <p role="status" data-testid="merge-result">
          Merged into <code className="font-mono">{base}</code> as <code className="font-mono">{sha.slice(0, 10)}</code>
          .
        </p>
      ) : (
        <form
          className="flex flex-col gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            void merge();
          }}
        >
          <fieldset className="flex flex-col gap-1">
            <legend className="mb-1 text-xs text-muted">How</legend>
            {(
              [
                ["squash", "Squash: one commit on the base"],
                ["merge", "Merge commit: keep the branch's commits"],
              ] as const
            ).map(([value, label]) => (
              <label key={value} className="flex items-center gap-2">
                <input
                  type="radio"
                  name="merge-strategy"
                  value={value}
                  checked={strategy === value}
                  onChange={() => setStrategy(value)}
                  data-autofocus={value === strategy ? true : undefined}
                  data-testid={`merge-${value}`}
                />
                {label}
              </label>
            ))}
          </fieldset>
          <button type="submit" className={`${PRIMARY} self-start`} disabled={action.busy} data-testid="merge-submit">
            {action.busy ? "Merging…" : "Merge"}
          </button>
        </form>
      )}
      {conflict ? (
        <div role="alert" className="flex flex-col gap-2" data-testid="merge-conflict">
          <p className="text-danger">
            The merge conflicts; your checkout was left exactly as it was. Conflicting files:
          </p>
          <ul className="list-inside list-disc font-mono text-xs">
            {conflict.map((path) => (
              <li key={path} data-testid="conflict-path">
                {path}
              </li>
            ))}
          </ul>
          {asked ? (
            <p role="status" data-testid="resolve-asked">
              The agent was asked to resolve it; its card moves to Running.
            </p>
          ) : (
            <button
              type="button"
              className={`${PRIMARY} self-start`}
              disabled={resolving.busy}
              onClick={() => void resolve()}
              data-testid="resolve-conflict"
            >
              Ask the agent to resolve
            </button>
          )}
          {resolving.message ? <p className="text-danger">{resolving.message}</p> : null}
        </div>
      ) : action.message ? (
        <p role="alert" className="text-danger" data-testid="merge-error">
          {action.message}
        </p>
      ) : null}
    </Modal>
  );
}

export function PushDialog({ card, open, onClose }: DialogProps) {
  const [remote, setRemote] = useState("");
  const [pushed, setPushed] = useState<Pushed | null>(null);
  const action = useAction();
  const push = async () => {
    const result = await action.run(() => pushSession(card.id, remote));
    if (result) setPushed(result);
  };
  return (
    <Modal open={open} onClose={onClose} title={`Push “${card.title}”`} testId="push-dialog">
      {pushed ? (
        <div role="status" className="flex flex-col gap-1" data-testid="push-result">
          <p>
            Pushed <code className="font-mono">{pushed.branch}</code> to{" "}
            <code className="font-mono">{pushed.remote}</code>.
          </p>
          {pushed.compare_url ? (
            <a
              href={pushed.compare_url}
              target="_blank"
              rel="noreferrer"
              className="text-accent underline"
              data-testid="push-compare"
            >
              Open a pull request
            </a>
          ) : null}
        </div>
      ) : (
        <form
          className="flex flex-col gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            void push();
          }}
        >
          <label htmlFor="push-remote" className="text-xs text-muted">
            Remote (empty: the repository&apos;s default)
          </label>
          <input
            id="push-remote"
            className="rounded border border-border bg-bg px-2 py-1 font-mono outline-none focus:border-accent"
            placeholder="origin"
            value={remote}
            onChange={(event) => setRemote(event.target.value)}
            data-autofocus
            data-testid="push-remote"
          />
          <button type="submit" className={`${PRIMARY} self-start`} disabled={action.busy} data-testid="push-submit">
            {action.busy ? "Pushing…" : `Push ${card.worktree?.branch ?? ""}`}
          </button>
        </form>
      )}
      {action.message ? (
        <p role="alert" className="text-danger" data-testid="push-error">
          {action.message}
        </p>
      ) : null}
    </Modal>
  );
}
