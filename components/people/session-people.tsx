"use client";

import * as z from "zod";
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { SessionAccessView } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { useMe } from "./use-me";

/** In the share dialog on a hub: share the session with a person or everyone, to view or to drive. */
export function SessionPeople({ sessionId }: { sessionId: string }) {
  const me = useMe();
  const [rows, setRows] = useState<SessionAccessView[]>([]);
  const [error, setError] = useState<string | null>(null);
  const path = `/api/v1/sessions/${encodeURIComponent(sessionId)}/access`;

  const refresh = useCallback(() => {
    api(path, z.array(SessionAccessView)).then(setRows, (err: Error) => setError(err.message));
  }, [path]);
  useEffect(() => {
    if (me?.people) refresh();
  }, [me?.people, refresh]);
  if (!me?.people) return null;

  const share = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      setRows(
        await api(path, z.array(SessionAccessView), {
          method: "PUT",
          body: { subject: String(form.get("subject") ?? "").trim(), access: form.get("access") },
        }),
      );
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const remove = async (subject: string) => {
    setError(null);
    try {
      setRows(
        await api(`${path}?subject=${encodeURIComponent(subject)}`, z.array(SessionAccessView), { method: "DELETE" }),
      );
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <div className="mt-3 border-t border-border pt-2" data-testid="session-people">
      <h3 className="mb-1 text-xs font-semibold text-muted">People</h3>
      <form onSubmit={(e) => void share(e)} className="mb-2 flex items-center gap-2 text-xs">
        <label className="sr-only" htmlFor="share-subject">
          Person, or everyone
        </label>
        <input
          id="share-subject"
          name="subject"
          required
          placeholder="name, or everyone"
          className="min-w-0 flex-1 rounded border border-border bg-panel px-1 py-0.5"
        />
        <label className="sr-only" htmlFor="share-access">
          Access
        </label>
        <select id="share-access" name="access" className="rounded border border-border bg-panel px-1 py-0.5">
          <option value="view">View</option>
          <option value="drive">Drive</option>
        </select>
        <button type="submit" className="rounded bg-accent/20 px-2 py-0.5 text-accent hover:bg-accent/30">
          Share
        </button>
      </form>
      {error ? (
        <p className="mb-1 text-xs text-danger" role="alert">
          {error}
        </p>
      ) : null}
      <ul className="space-y-1 text-xs">
        {rows.map((row) => (
          <li key={row.subject} className="flex items-center gap-2">
            <span className="flex-1">{row.subject}</span>
            <span className="text-muted">{row.access}</span>
            {row.access !== "owner" ? (
              <button
                type="button"
                className="rounded px-1.5 py-0.5 text-danger hover:bg-panel"
                onClick={() => void remove(row.subject)}
                aria-label={`Stop sharing with ${row.subject}`}
              >
                Remove
              </button>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
