"use client";

import Link from "next/link";
import { useState } from "react";
import { Deleted, formatCost, SessionSummary } from "@/server/protocol";
import { api } from "@/components/transport/client";

/** One session in the list: open, rename in place, archive, delete after confirmation. */
export function SessionRow({ session, onChanged }: { session: SessionSummary; onChanged: () => void }) {
  const [renaming, setRenaming] = useState(false);
  const [title, setTitle] = useState(session.title);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const path = `/api/v1/sessions/${encodeURIComponent(session.id)}`;

  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      onChanged();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <li
      className="group flex items-center gap-2 px-3 py-1.5 hover:bg-raised"
      data-testid="session-row"
      data-session={session.id}
    >
      {renaming ? (
        <form
          className="flex flex-1 gap-2"
          onSubmit={(event) => {
            event.preventDefault();
            setRenaming(false);
            void run(() =>
              api(path, SessionSummary, { method: "PATCH", body: { title: title.trim() || session.title } }),
            );
          }}
        >
          <input
            autoFocus
            className="flex-1 rounded border border-border bg-bg px-2 py-0.5 outline-none focus:border-accent"
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            onKeyDown={(e) => e.key === "Escape" && setRenaming(false)}
            aria-label="Session title"
            data-testid="rename-input"
          />
          <button type="submit" className="text-xs text-accent">
            Save
          </button>
        </form>
      ) : (
        <Link href={`/s/${session.id}`} className="flex min-w-0 flex-1 items-center gap-3" data-testid="session-link">
          <span className="truncate">{session.title}</span>
          {session.status === "running" ? <span className="text-xs text-accent">running</span> : null}
          {session.archived ? <span className="text-xs text-muted">archived</span> : null}
          {session.runner ? (
            <span className="text-xs text-muted" data-testid="session-runner" title="Its workspace is on this runner">
              on {session.runner}
            </span>
          ) : null}
          <span className="ml-auto shrink-0 text-xs text-muted" data-testid="session-cost" title="Cost so far">
            {formatCost(session.cost_usd)}
          </span>
          <span className="shrink-0 text-xs text-muted">{new Date(session.updated_at).toLocaleString()}</span>
        </Link>
      )}
      {error ? <span className="text-xs text-danger">{error}</span> : null}
      {confirming ? (
        <span className="flex items-center gap-1 text-xs" role="alertdialog" aria-label="Confirm delete">
          Delete for good?
          <button
            type="button"
            className="rounded bg-danger/20 px-1.5 text-danger"
            onClick={() => void run(() => api(path, Deleted, { method: "DELETE" }))}
            data-testid="confirm-delete"
          >
            Delete
          </button>
          <button type="button" className="px-1.5 text-muted" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </span>
      ) : (
        <span className="flex shrink-0 gap-1 text-xs text-muted">
          <button
            type="button"
            className="hover:text-fg"
            onClick={() => setRenaming(true)}
            data-testid="rename-session"
          >
            Rename
          </button>
          <button
            type="button"
            className="hover:text-fg"
            onClick={() =>
              void run(() => api(path, SessionSummary, { method: "PATCH", body: { archived: !session.archived } }))
            }
            data-testid="archive-session"
          >
            {session.archived ? "Unarchive" : "Archive"}
          </button>
          <button
            type="button"
            className="hover:text-danger"
            onClick={() => setConfirming(true)}
            data-testid="delete-session"
          >
            Delete
          </button>
        </span>
      )}
    </li>
  );
}
