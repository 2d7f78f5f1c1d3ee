"use client";

import { useCallback, useEffect, useState, type FormEvent } from "react";
import { AddedRunner, RevokedRunner, RunnerList, RunnerView } from "@/server/protocol";
import { api } from "@/components/transport/client";

/**
 * Runners: machines that dial this hub and run sessions' tools and terminals. Adding one shows its
 * one-time token (to give `worldline runner --token`); renaming one reconnects it under the new
 * name; revoking one disconnects it at once.
 */
export function RunnersSection() {
  const [runners, setRunners] = useState<RunnerView[] | null>(null);
  const [name, setName] = useState("");
  const [token, setToken] = useState<{ name: string; token: string } | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [renaming, setRenaming] = useState<{ from: string; to: string } | null>(null);

  const load = useCallback(() => {
    api("/api/v1/runners", RunnerList).then(setRunners, (err: Error) => setStatus(err.message));
  }, []);
  useEffect(load, [load]);

  const add = async (event: FormEvent) => {
    event.preventDefault();
    setStatus(null);
    try {
      setToken(await api("/api/v1/runners", AddedRunner, { method: "POST", body: { name: name.trim() } }));
      setName("");
      load();
    } catch (err) {
      setStatus(err instanceof Error ? err.message : String(err));
    }
  };

  const rename = async (event: FormEvent) => {
    event.preventDefault();
    if (!renaming) return;
    setStatus(null);
    try {
      await api(`/api/v1/runners/${encodeURIComponent(renaming.from)}`, RunnerView.pick({ name: true }), {
        method: "PATCH",
        body: { name: renaming.to.trim() },
      });
      setRenaming(null);
      load();
    } catch (err) {
      setStatus(err instanceof Error ? err.message : String(err));
    }
  };

  const revoke = async (runner: string) => {
    setStatus(null);
    try {
      await api(`/api/v1/runners/${encodeURIComponent(runner)}`, RevokedRunner, { method: "DELETE" });
      load();
    } catch (err) {
      setStatus(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <div className="flex flex-col gap-2" data-testid="runners-section">
      {runners && runners.length === 0 ? <p className="text-muted">No runners yet.</p> : null}
      <ul className="flex flex-col gap-1">
        {runners?.map((runner) => (
          <li key={runner.name} className="flex items-center gap-2" data-testid="runner-row">
            {renaming?.from === runner.name ? (
              <form className="flex gap-1" onSubmit={rename}>
                <input
                  aria-label={`New name for ${runner.name}`}
                  autoFocus
                  className="rounded-md border border-border bg-bg px-2 py-0.5 font-mono outline-none focus:border-accent"
                  value={renaming.to}
                  onChange={(event) => setRenaming({ from: runner.name, to: event.target.value })}
                  onKeyDown={(event) => event.key === "Escape" && setRenaming(null)}
                />
                <button type="submit" disabled={!renaming.to.trim()} className="text-xs disabled:opacity-40">
                  Save
                </button>
              </form>
            ) : (
              <span className="font-mono">{runner.name}</span>
            )}
            <span className={runner.connected ? "text-xs text-accent" : "text-xs text-muted"}>
              {runner.connected ? "connected" : runner.last_seen ? `last seen ${runner.last_seen}` : "never connected"}
            </span>
            <span className="truncate font-mono text-xs text-muted">{runner.roots.join(", ")}</span>
            <button
              type="button"
              className="ml-auto text-xs"
              onClick={() => setRenaming({ from: runner.name, to: runner.name })}
            >
              Rename
            </button>
            <button type="button" className="text-xs text-danger" onClick={() => void revoke(runner.name)}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <form className="flex gap-2" onSubmit={add}>
        <input
          aria-label="New runner name"
          className="flex-1 rounded-md border border-border bg-bg px-2 py-1 font-mono outline-none focus:border-accent"
          placeholder="devbox"
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
        <button
          type="submit"
          disabled={!name.trim()}
          className="rounded-md border border-border px-3 py-1 disabled:opacity-40"
        >
          Add runner
        </button>
      </form>
      {token ? (
        <p className="text-xs" data-testid="runner-token">
          On {token.name}&apos;s machine run (the token works once, within 24 hours):{" "}
          <code className="break-all font-mono">
            worldline runner --hub {typeof window === "undefined" ? "<hub URL>" : window.location.origin} --token{" "}
            {token.token} --root &lt;folder&gt;
          </code>
        </p>
      ) : null}
      {status ? <p className="text-xs text-danger">{status}</p> : null}
    </div>
  );
}
