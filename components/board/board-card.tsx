"use client";

import Link from "next/link";
import { useEffect, useState } from "react";
import { formatSpend, type BoardCard as Card } from "@/server/protocol";
import { BUTTON } from "./buttons";
import { decideApproval, restoreSession } from "./fleet-api";
import { useAction } from "./use-action";

export type CardDialog = "commit" | "merge" | "push" | "archive";

/** The elapsed time of a running turn redraws this often. */
const TICK_MS = 1_000;

/**
 * One session on the board: title (the way into it), branch, diff stat, cost, how long the turn
 * has run and the last thing the agent did; a waiting approval decided right here; and what can
 * be done with its work, each a button (the dialogs belong to the board, so they survive the
 * card moving to another column).
 */
export function BoardCard({
  card,
  onDialog,
  onChanged,
}: {
  card: Card;
  onDialog: (dialog: CardDialog) => void;
  onChanged: () => void;
}) {
  const titleId = `card-title-${card.id}`;
  const archived = card.state === "archived";
  return (
    <article
      className="flex flex-col gap-1.5 rounded-md border border-border bg-panel p-2.5"
      aria-labelledby={titleId}
      data-testid="board-card"
      data-session={card.id}
      data-state={card.state}
    >
      <h4 id={titleId} className="min-w-0 text-sm font-medium">
        <Link href={`/s/${card.id}`} className="line-clamp-2 break-words hover:underline" data-testid="card-link">
          {card.title}
        </Link>
      </h4>
      <div className="flex flex-wrap items-center gap-x-2 gap-y-0.5 text-xs text-muted">
        {card.worktree ? (
          <span className="truncate font-mono" title={card.worktree.path} data-testid="card-branch">
            {card.worktree.branch}
          </span>
        ) : (
          <span>in place</span>
        )}
        {card.runner ? <span>on {card.runner}</span> : null}
      </div>
      <div className="flex flex-wrap items-center gap-x-3 text-xs">
        <ChangeStatLine card={card} />
        <span
          className="text-muted"
          title={card.budget_usd != null ? "Cost so far of the session's budget" : "Cost so far"}
          data-testid="card-cost"
        >
          {formatSpend(card.cost_usd, card.budget_usd)}
        </span>
        {card.turn_started_at ? <Elapsed since={card.turn_started_at} /> : null}
      </div>
      {card.last_activity ? (
        <p className="truncate text-xs text-muted" title={card.last_activity} data-testid="card-activity">
          {card.last_activity}
        </p>
      ) : null}
      {card.approval ? <CardApproval card={card} /> : null}
      {archived ? <RestoreButton card={card} onChanged={onChanged} /> : <Actions card={card} onDialog={onDialog} />}
    </article>
  );
}

function ChangeStatLine({ card }: { card: Card }) {
  if (!card.changes) return null;
  const { additions, deletions, files } = card.changes;
  return (
    <span data-testid="card-changes" aria-label={`${additions} added, ${deletions} deleted lines in ${files} files`}>
      <span className="text-ok">+{additions}</span> <span className="text-danger">−{deletions}</span>{" "}
      <span className="text-muted">
        {files} {files === 1 ? "file" : "files"}
      </span>
    </span>
  );
}

function Elapsed({ since }: { since: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), TICK_MS);
    return () => clearInterval(timer);
  }, []);
  const seconds = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  const text = seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`;
  return (
    <time className="tabular-nums text-muted" dateTime={since} title="Running for" data-testid="card-elapsed">
      {text}
    </time>
  );
}

function CardApproval({ card }: { card: Card }) {
  const approval = card.approval!;
  const action = useAction();
  const decide = (decision: "allow_once" | "reject") =>
    action.run(() => decideApproval(approval.approval_id, decision));
  return (
    <div className="flex flex-col gap-1 rounded border border-warn/60 p-1.5 text-xs" data-testid="card-approval">
      <p className="break-words">
        <span className="font-mono text-warn">{approval.tool}</span> {approval.description}
      </p>
      <div className="flex gap-1">
        <button
          type="button"
          className={BUTTON}
          disabled={action.busy}
          onClick={() => void decide("allow_once")}
          data-testid="card-allow"
        >
          Allow once
        </button>
        <button
          type="button"
          className={BUTTON}
          disabled={action.busy}
          onClick={() => void decide("reject")}
          data-testid="card-reject"
        >
          Reject
        </button>
      </div>
      {action.message ? <p className="text-danger">{action.message}</p> : null}
    </div>
  );
}

function Actions({ card, onDialog }: { card: Card; onDialog: (dialog: CardDialog) => void }) {
  const busy = card.state === "running";
  const hasWork = (card.changes?.files ?? 0) > 0;
  const label = (verb: string) => `${verb} “${card.title}”`;
  return (
    <div className="flex flex-wrap gap-1" data-testid="card-actions">
      {card.worktree ? (
        <>
          <button
            type="button"
            className={BUTTON}
            disabled={busy || !hasWork}
            aria-label={label("Commit")}
            onClick={() => onDialog("commit")}
            data-testid="card-commit"
          >
            Commit
          </button>
          <button
            type="button"
            className={BUTTON}
            disabled={busy || !hasWork}
            aria-label={label("Merge")}
            onClick={() => onDialog("merge")}
            data-testid="card-merge"
          >
            Merge
          </button>
          <button
            type="button"
            className={BUTTON}
            disabled={busy}
            aria-label={label("Push")}
            onClick={() => onDialog("push")}
            data-testid="card-push"
          >
            Push
          </button>
        </>
      ) : null}
      <button
        type="button"
        className={BUTTON}
        disabled={busy}
        aria-label={label("Archive")}
        onClick={() => onDialog("archive")}
        data-testid="card-archive"
      >
        Archive
      </button>
    </div>
  );
}

function RestoreButton({ card, onChanged }: { card: Card; onChanged: () => void }) {
  const action = useAction();
  const restore = async () => {
    const ok = await action.run(async () => (await restoreSession(card), true));
    if (ok) onChanged();
  };
  return (
    <div className="flex flex-wrap items-center gap-1">
      <button
        type="button"
        className={BUTTON}
        disabled={action.busy}
        aria-label={`Restore “${card.title}”`}
        onClick={() => void restore()}
        data-testid="card-restore"
      >
        {action.busy ? "Restoring…" : "Restore"}
      </button>
      {action.message ? (
        <p className="text-xs text-danger" role="alert">
          {action.message}
        </p>
      ) : null}
    </div>
  );
}
