"use client";

import Link from "next/link";
import { useEffect, useMemo, useState } from "react";
import type { SessionSummary } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { NewSessionForm } from "./new-session-form";

export function HomeView() {
  const [sessions, setSessions] = useState<SessionSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api<SessionSummary[]>("/api/v1/sessions").then(setSessions, (err: Error) => setError(err.message));
  }, []);

  const groups = useMemo(() => {
    const byWorkspace = new Map<string, SessionSummary[]>();
    for (const session of sessions ?? []) byWorkspace.set(session.workspace, [...(byWorkspace.get(session.workspace) ?? []), session]);
    return [...byWorkspace.entries()];
  }, [sessions]);

  return (
    <div className="mx-auto flex max-w-4xl flex-col gap-6 p-6">
      <NewSessionForm recent={groups.map(([workspace]) => workspace).slice(0, 6)} />
      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading" className="mb-2 text-xs font-semibold uppercase tracking-wider text-muted">
          Sessions
        </h2>
        {error ? <p className="text-danger">{error}</p> : null}
        {sessions === null && !error ? <p className="text-muted">Loading…</p> : null}
        {sessions?.length === 0 ? (
          <p className="text-muted" data-testid="sessions-empty">
            No sessions yet. Pick a folder above to start one.
          </p>
        ) : null}
        <div className="flex flex-col gap-4" data-testid="session-list">
          {groups.map(([workspace, items]) => (
            <div key={workspace}>
              <div className="mb-1 truncate font-mono text-xs text-muted">{workspace}</div>
              <ul className="divide-y divide-border rounded-md border border-border bg-panel">
                {items.map((session) => (
                  <li key={session.id}>
                    <Link href={`/s/${session.id}`} className="flex items-center gap-3 px-3 py-2 hover:bg-raised" data-testid="session-link">
                      <span className="truncate">{session.title}</span>
                      {session.status === "running" ? <span className="text-xs text-accent">running</span> : null}
                      <span className="ml-auto shrink-0 text-xs text-muted">{new Date(session.updated_at).toLocaleString()}</span>
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </div>
      </section>
    </div>
  );
}
