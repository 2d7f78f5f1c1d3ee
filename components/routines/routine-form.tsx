"use client";

import { useReducer } from "react";
import { CreatedRoutine } from "@/server/protocol";
import { api } from "@/components/transport/client";

interface Draft {
  name: string;
  prompt: string;
  workspace: string;
  schedule: string;
  isolation: "worktree" | "none";
  budget: string;
}

const EMPTY: Draft = { name: "", prompt: "", workspace: "", schedule: "", isolation: "worktree", budget: "" };

/** A new routine: what it asks, where, when, and what it may spend per run. */
export function RoutineForm({
  onCreated,
  onError,
}: {
  onCreated: (routine: CreatedRoutine) => void;
  onError: (error: unknown) => void;
}) {
  const [draft, change] = useReducer((state: Draft, patch: Partial<Draft>) => ({ ...state, ...patch }), EMPTY);

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    try {
      const routine = await api("/api/v1/routines", CreatedRoutine, {
        method: "POST",
        body: {
          name: draft.name,
          prompt: draft.prompt,
          workspace: draft.workspace,
          isolation: draft.isolation,
          ...(draft.schedule.trim() ? { schedule: draft.schedule.trim() } : {}),
          ...(draft.budget.trim() ? { budget_usd: Number(draft.budget) } : {}),
        },
      });
      onCreated(routine);
      change(EMPTY);
    } catch (caught) {
      onError(caught);
    }
  };

  const field = "rounded border border-border bg-panel px-2 py-1";
  return (
    <form
      className="grid gap-2 text-sm sm:grid-cols-2"
      onSubmit={(event) => void submit(event)}
      data-testid="routine-form"
    >
      <label className="flex flex-col gap-1">
        Name
        <input
          className={field}
          required
          value={draft.name}
          onChange={(e) => change({ name: e.target.value })}
          data-testid="routine-name"
        />
      </label>
      <label className="flex flex-col gap-1">
        Folder
        <input
          className={field}
          required
          placeholder="/path/to/repository"
          value={draft.workspace}
          onChange={(e) => change({ workspace: e.target.value })}
          data-testid="routine-workspace"
        />
      </label>
      <label className="flex flex-col gap-1 sm:col-span-2">
        Prompt
        <textarea
          className={field}
          required
          rows={3}
          value={draft.prompt}
          onChange={(e) => change({ prompt: e.target.value })}
          data-testid="routine-prompt"
        />
      </label>
      <label className="flex flex-col gap-1">
        Schedule (cron, optional)
        <input
          className={field}
          placeholder="0 9 * * 1-5"
          value={draft.schedule}
          onChange={(e) => change({ schedule: e.target.value })}
          data-testid="routine-schedule"
        />
      </label>
      <label className="flex flex-col gap-1">
        Budget per run, USD (optional)
        <input
          className={field}
          inputMode="decimal"
          value={draft.budget}
          onChange={(e) => change({ budget: e.target.value })}
          data-testid="routine-budget"
        />
      </label>
      <label className="flex items-center gap-2">
        <input
          type="checkbox"
          checked={draft.isolation === "worktree"}
          onChange={(e) => change({ isolation: e.target.checked ? "worktree" : "none" })}
          data-testid="routine-worktree"
        />
        Each run in a fresh worktree
      </label>
      <button
        type="submit"
        className="justify-self-start rounded bg-raised px-3 py-1 hover:text-fg"
        data-testid="routine-create"
      >
        Create routine
      </button>
    </form>
  );
}
