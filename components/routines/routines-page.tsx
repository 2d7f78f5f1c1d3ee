"use client";

import Link from "next/link";
import * as z from "zod";
import { useCallback, useEffect, useState } from "react";
import { CreatedRoutine, formatCost, RoutineRunView, RoutineView } from "@/server/protocol";
import { api, BridgeError } from "@/components/transport/client";
import { RoutineForm } from "./routine-form";

/** The /routines page: saved prompts on a schedule or fired by a webhook, and each one's runs. */
export function RoutinesPage() {
  const [routines, setRoutines] = useState<RoutineView[] | null>(null);
  const [created, setCreated] = useState<CreatedRoutine | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setRoutines(await api("/api/v1/routines", z.array(RoutineView)));
      setError(null);
    } catch (caught) {
      setError(message(caught));
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const remove = async (id: string) => {
    try {
      await api(`/api/v1/routines/${encodeURIComponent(id)}`, z.unknown(), { method: "DELETE" });
      setRoutines((current) => current?.filter((routine) => routine.id !== id) ?? null);
    } catch (caught) {
      setError(message(caught));
    }
  };

  return (
    <div className="mx-auto flex max-w-4xl flex-col gap-4 p-3 sm:p-6" data-testid="routines-page">
      <h1 className="text-base font-semibold">Routines</h1>
      <p className="text-sm text-muted">
        A routine runs a saved prompt in a new session: on a cron schedule (the bridge&apos;s time zone), or when its
        URL is called with its token, by a webhook or a script.
      </p>
      <RoutineForm
        onCreated={(routine) => {
          setCreated(routine);
          setRoutines((current) => [...(current ?? []), routine]);
        }}
        onError={(caught) => setError(message(caught))}
      />
      {created ? <FireHint routine={created} onDone={() => setCreated(null)} /> : null}
      {error ? (
        <p className="text-sm text-red-400" role="alert" data-testid="routines-error">
          {error}
        </p>
      ) : null}
      {routines === null ? (
        <p className="text-sm text-muted">Loading…</p>
      ) : routines.length === 0 ? (
        <p className="text-sm text-muted" data-testid="routines-empty">
          No routines yet.
        </p>
      ) : (
        <ul className="flex flex-col gap-3" data-testid="routine-list">
          {routines.map((routine) => (
            <RoutineItem key={routine.id} routine={routine} onDelete={() => void remove(routine.id)} />
          ))}
        </ul>
      )}
    </div>
  );
}

/** The token is shown once, with the call that fires it. */
function FireHint({ routine, onDone }: { routine: CreatedRoutine; onDone: () => void }) {
  const url = `${window.location.origin}/api/v1/routines/${routine.id}/fire`;
  return (
    <section className="rounded border border-border bg-panel p-3 text-sm" data-testid="routine-token">
      <p>
        Fire <strong>{routine.name}</strong> with this token. It is shown once and works for this routine&apos;s fire
        URL only.
      </p>
      <pre className="mt-2 overflow-x-auto whitespace-pre-wrap break-all rounded bg-raised p-2 text-xs">
        {`curl -X POST ${url} \\\n  -H 'Authorization: Bearer ${routine.token}' \\\n  -H 'Content-Type: application/json' -d '{}'`}
      </pre>
      <button type="button" className="mt-2 rounded bg-raised px-3 py-1" onClick={onDone}>
        Done
      </button>
    </section>
  );
}

function RoutineItem({ routine, onDelete }: { routine: RoutineView; onDelete: () => void }) {
  const [runs, setRuns] = useState<RoutineRunView[] | null>(null);
  useEffect(() => {
    let stop = false;
    const read = () =>
      api(`/api/v1/routines/${encodeURIComponent(routine.id)}/runs`, z.array(RoutineRunView)).then(
        (list) => !stop && setRuns(list),
        () => undefined, // the next read tries again
      );
    void read();
    // Runs start on their own (a schedule, a webhook): the history follows them while the page is open.
    const timer = setInterval(() => void read(), 5_000);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [routine.id]);

  return (
    <li className="rounded border border-border p-3" data-testid="routine-item" data-routine-id={routine.id}>
      <div className="flex flex-wrap items-baseline gap-2">
        <h2 className="text-sm font-semibold">{routine.name}</h2>
        <span className="text-xs text-muted">
          {routine.schedule ? `cron ${routine.schedule}` : "fired by its URL only"} · {routine.isolation} ·{" "}
          {routine.budget_usd === null ? "no budget" : `budget ${formatCost(routine.budget_usd)} per run`}
        </span>
        <button
          type="button"
          className="ml-auto rounded px-2 py-1 text-xs text-muted hover:bg-raised hover:text-fg"
          onClick={onDelete}
          aria-label={`Delete routine ${routine.name}`}
        >
          Delete
        </button>
      </div>
      <p className="mt-1 truncate text-xs text-muted" title={routine.workspace}>
        {routine.workspace}
      </p>
      <p className="mt-1 line-clamp-2 whitespace-pre-wrap text-sm">{routine.prompt}</p>
      <RunHistory runs={runs} />
    </li>
  );
}

function RunHistory({ runs }: { runs: RoutineRunView[] | null }) {
  if (!runs || runs.length === 0) return <p className="mt-2 text-xs text-muted">No runs yet.</p>;
  return (
    <table className="mt-2 w-full text-left text-xs" data-testid="routine-runs">
      <thead className="text-muted">
        <tr>
          <th className="font-normal">Started</th>
          <th className="font-normal">Trigger</th>
          <th className="font-normal">Outcome</th>
          <th className="font-normal">Cost</th>
          <th className="font-normal">Session</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.id} data-testid="routine-run">
            <td>
              <time dateTime={run.started_at}>{new Date(run.started_at).toLocaleString()}</time>
            </td>
            <td>{run.trigger}</td>
            <td title={run.error ?? undefined}>{run.outcome ?? run.status}</td>
            <td>{run.cost_usd === null ? "—" : formatCost(run.cost_usd)}</td>
            <td>{run.session_id ? <Link href={`/s/${run.session_id}`}>open</Link> : "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function message(error: unknown): string {
  return error instanceof BridgeError || error instanceof Error ? error.message : String(error);
}
