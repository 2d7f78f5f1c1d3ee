"use client";

import * as z from "zod";
import { useCallback, useEffect, useMemo, useState } from "react";
import { RecentWorkspaces, SessionSearchResult, SessionSummary } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { NewSessionForm } from "./new-session-form";
import { SessionRow } from "./session-row";

/** Typing pauses this long before the content search asks the bridge. */
const SEARCH_DEBOUNCE_MS = 200;

export function HomeView() {
  const [sessions, setSessions] = useState<SessionSummary[] | null>(null);
  const [recent, setRecent] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [matches, setMatches] = useState<Set<string> | null>(null);
  const [showArchived, setShowArchived] = useState(false);

  const reload = useCallback(() => {
    api(`/api/v1/sessions${showArchived ? "?archived=1" : ""}`, z.array(SessionSummary)).then(
      setSessions,
      (err: Error) => setError(err.message),
    );
    api("/api/v1/workspaces/recent", RecentWorkspaces).then(
      (rows) => setRecent(rows.map((r) => r.path)),
      () => undefined,
    );
  }, [showArchived]);
  useEffect(reload, [reload]);

  useEffect(() => {
    if (!query.trim()) return setMatches(null);
    const timer = setTimeout(() => {
      api(`/api/v1/sessions-search?q=${encodeURIComponent(query.trim())}`, SessionSearchResult).then(
        (r) => setMatches(new Set(r.ids)),
        () => setMatches(null),
      );
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [query]);

  const groups = useMemo(() => {
    const byWorkspace = new Map<string, SessionSummary[]>();
    for (const session of sessions ?? []) {
      if (matches && !matches.has(session.id)) continue;
      byWorkspace.set(session.workspace, [...(byWorkspace.get(session.workspace) ?? []), session]);
    }
    return [...byWorkspace.entries()];
  }, [sessions, matches]);

  return (
    <div className="mx-auto flex max-w-4xl flex-col gap-6 p-4 sm:p-6">
      <NewSessionForm recent={(recent.length ? recent : groups.map(([w]) => w)).slice(0, 6)} />
      <section aria-labelledby="sessions-heading">
        <div className="mb-2 flex flex-wrap items-center gap-2">
          <h2 id="sessions-heading" className="text-xs font-semibold uppercase tracking-wider text-muted">
            Sessions
          </h2>
          <input
            type="search"
            className="ml-auto w-56 rounded border border-border bg-bg px-2 py-1 text-xs outline-none focus:border-accent"
            placeholder="Search titles and conversations"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            aria-label="Search sessions"
            data-testid="session-search"
          />
          <label className="flex items-center gap-1 text-xs text-muted">
            <input
              type="checkbox"
              checked={showArchived}
              onChange={(e) => setShowArchived(e.target.checked)}
              data-testid="show-archived"
            />
            archived
          </label>
        </div>
        {error ? <p className="text-danger">{error}</p> : null}
        {sessions === null && !error ? (
          <p className="text-muted" data-testid="sessions-loading">
            Loading…
          </p>
        ) : null}
        {sessions?.length === 0 ? (
          <p className="text-muted" data-testid="sessions-empty">
            No sessions yet. Pick a folder above to start one.
          </p>
        ) : null}
        {sessions?.length && groups.length === 0 ? (
          <p className="text-muted" data-testid="search-empty">
            No session matches “{query}”.
          </p>
        ) : null}
        <div className="flex flex-col gap-4" data-testid="session-list">
          {groups.map(([workspace, items]) => (
            <div key={workspace} data-testid="workspace-group">
              <div className="mb-1 truncate font-mono text-xs text-muted">{workspace}</div>
              <ul className="divide-y divide-border rounded-md border border-border bg-panel">
                {items.map((session) => (
                  <SessionRow key={session.id} session={session} onChanged={reload} />
                ))}
              </ul>
            </div>
          ))}
        </div>
      </section>
    </div>
  );
}
