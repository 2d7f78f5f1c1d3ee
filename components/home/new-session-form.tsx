"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState, type FormEvent } from "react";
import { DirectoryListing, RunnerList, SessionSummary, type RunnerView } from "@/server/protocol";
import { api, BridgeError } from "@/components/transport/client";
import { useIsRepo } from "@/components/shared/use-is-repo";

export function NewSessionForm({ recent }: { recent: string[] }) {
  const router = useRouter();
  const [workspace, setWorkspace] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [listing, setListing] = useState<DirectoryListing | null>(null);
  // "" is this machine; otherwise a connected runner's name (its folders are on its machine).
  const [machine, setMachine] = useState("");
  const [runners, setRunners] = useState<RunnerView[]>([]);
  // Its own worktree by default for the top of a git repository; the user's choice wins once made.
  const [isolationChoice, setIsolationChoice] = useState<boolean | null>(null);
  const isRepo = useIsRepo(workspace, machine);
  const isolated = isolationChoice ?? isRepo === true;

  useEffect(() => {
    // A bridge without runners answers an empty list; a failure leaves only this machine to pick.
    api("/api/v1/runners", RunnerList).then(
      (list) => setRunners(list.filter((runner) => runner.connected)),
      () => setRunners([]),
    );
  }, []);

  const pickMachine = (name: string) => {
    setMachine(name);
    setListing(null);
    setWorkspace(runners.find((runner) => runner.name === name)?.roots[0] ?? "");
  };

  const create = async (event?: FormEvent) => {
    event?.preventDefault();
    if (!workspace.trim()) return;
    setBusy(true);
    setError(null);
    try {
      const session = await api("/api/v1/sessions", SessionSummary, {
        method: "POST",
        body: {
          workspace: workspace.trim(),
          ...(isolated ? { isolation: "worktree" } : {}),
          ...(machine ? { runner: machine } : {}),
        },
      });
      router.push(`/s/${session.id}`);
    } catch (err) {
      if (err instanceof BridgeError && err.code === "worktree:not_a_repo") setIsolationChoice(false);
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };

  const browse = async (dir?: string) => {
    try {
      const query = dir ? `?path=${encodeURIComponent(dir)}` : "";
      const base = machine ? `/api/v1/runners/${encodeURIComponent(machine)}/folders` : "/api/v1/fs/directories";
      const result = await api(`${base}${query}`, DirectoryListing);
      setListing(result);
      setWorkspace(result.path);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <section className="rounded-md border border-border bg-panel p-4" aria-labelledby="new-session-heading">
      <h1 id="new-session-heading" className="mb-3 text-sm font-semibold">
        New session
      </h1>
      <form className="flex gap-2" onSubmit={create}>
        {runners.length > 0 ? (
          <select
            data-testid="machine-select"
            aria-label="Machine"
            className="rounded-md border border-border bg-bg px-2 py-2"
            value={machine}
            onChange={(event) => pickMachine(event.target.value)}
          >
            <option value="">This machine</option>
            {runners.map((runner) => (
              <option key={runner.name} value={runner.name}>
                {runner.name} ({runner.roots.join(", ")})
              </option>
            ))}
          </select>
        ) : null}
        <input
          data-testid="workspace-input"
          aria-label="Workspace folder"
          className="flex-1 rounded-md border border-border bg-bg px-3 py-2 font-mono outline-none focus:border-accent"
          placeholder="/path/to/your/project"
          value={workspace}
          onChange={(event) => setWorkspace(event.target.value)}
        />
        <button
          type="button"
          onClick={() => void browse(workspace.trim() || undefined)}
          className="rounded-md border border-border px-3 py-2 hover:bg-raised"
          data-testid="browse-button"
        >
          Browse…
        </button>
        <button
          type="submit"
          disabled={busy || !workspace.trim()}
          className="rounded-md bg-accent px-3 py-2 font-medium text-bg disabled:opacity-40"
          data-testid="create-session"
        >
          Start
        </button>
      </form>
      <label className="mt-2 flex items-center gap-2 text-xs max-md:min-h-[44px]">
        <input
          type="checkbox"
          role="switch"
          checked={isolated}
          onChange={(event) => setIsolationChoice(event.target.checked)}
          data-testid="isolation-switch"
        />
        Own worktree (a new branch in a separate folder; needs a git repository)
      </label>
      {error ? (
        <p className="mt-2 text-danger" data-testid="new-session-error">
          {error}
        </p>
      ) : null}
      {recent.length > 0 && !listing && !machine ? (
        <div className="mt-3 flex flex-wrap gap-1 text-xs">
          <span className="text-muted">Recent:</span>
          {recent.map((path) => (
            <button
              key={path}
              type="button"
              className="rounded bg-raised px-2 py-0.5 font-mono hover:text-accent"
              onClick={() => setWorkspace(path)}
            >
              {path}
            </button>
          ))}
        </div>
      ) : null}
      {listing ? (
        <div className="mt-3 max-h-64 overflow-y-auto rounded-md border border-border" data-testid="folder-picker">
          {listing.parent ? (
            <button
              type="button"
              className="block w-full px-3 py-1 text-left font-mono text-muted hover:bg-raised"
              onClick={() => void browse(listing.parent!)}
            >
              ..
            </button>
          ) : null}
          {listing.entries.map((entry) => (
            <button
              key={entry.path}
              type="button"
              className="block w-full truncate px-3 py-1 text-left font-mono hover:bg-raised"
              onClick={() => void browse(entry.path)}
            >
              {entry.name}/
            </button>
          ))}
        </div>
      ) : null}
    </section>
  );
}
