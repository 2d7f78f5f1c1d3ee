"use client";

import * as z from "zod";
import { useCallback, useEffect, useMemo, useState } from "react";
import {
  CheckpointDiff,
  CheckpointSettings,
  CheckpointView,
  ForkResult,
  RewindResult,
  type TranscriptState,
} from "@/server/protocol";
import { api, BridgeError } from "@/components/transport/client";
import { canDrive, owns, useAccess } from "@/components/shared/use-access";
import type { RewindMode } from "@/components/review/rewind-api";
import type { CheckpointActions } from "./checkpoint-menu";
import { TurnRow } from "./turn-row";

interface Conflict {
  checkpoint: string;
  mode: RewindMode;
  paths: string[];
}

/**
 * The session's checkpoints as turns: one row per turn (its prompt, the files it changed), its
 * checkpoints inside; the actions (diff to now, rewind the conversation, the files or both, fork)
 * in a menu per row. Rewinds ask before overwriting edits made outside the agent; undo a rewind
 * or the last turn from the header. A page renders only what its access allows: a view link
 * diffs, a drive link also rewinds and undoes, the owner also forks and sets D-Mail.
 */
export function Timeline({
  sessionId,
  state,
  onOpenDiff,
  onForked,
}: {
  sessionId: string;
  state: TranscriptState;
  onOpenDiff?: (title: string, diff: string) => void;
  onForked?: (fork: ForkResult) => void;
}) {
  const base = `/api/v1/sessions/${encodeURIComponent(sessionId)}`;
  const [checkpoints, setCheckpoints] = useState<CheckpointView[]>([]);
  const [settings, setSettings] = useState<CheckpointSettings | null>(null);
  const [preview, setPreview] = useState<{ id: string; diff: CheckpointDiff } | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const running = state.running !== null;
  const access = useAccess(sessionId);
  const drives = canDrive(access);
  const owner = owns(access);
  // Every checkpoint and rewind is an event, so the count of views changes exactly when the list does.
  const version = Object.keys(state.checkpointViews ?? {}).length + state.items.length;

  const reload = useCallback(() => {
    api(`${base}/checkpoints`, z.array(CheckpointView)).then(setCheckpoints, (err: Error) => setMessage(err.message));
  }, [base]);

  useEffect(() => reload(), [reload, version, running]);
  useEffect(() => {
    api(`${base}/checkpoint-settings`, CheckpointSettings).then(setSettings, () => setSettings(null));
  }, [base]);

  const turns = useMemo(() => {
    const groups = new Map<number, CheckpointView[]>();
    for (const checkpoint of checkpoints)
      groups.set(checkpoint.turn, [...(groups.get(checkpoint.turn) ?? []), checkpoint]);
    return [...groups.entries()].sort((a, b) => b[0] - a[0]);
  }, [checkpoints]);

  const act = async (work: () => Promise<string>) => {
    setBusy(true);
    setMessage(null);
    try {
      setMessage(await work());
      reload();
    } catch (err) {
      if (err instanceof BridgeError && err.code === "checkpoint:conflict") return;
      setMessage(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const rewind = (checkpoint: string, mode: RewindMode, force = false) =>
    act(async () => {
      try {
        const result = await api(`${base}/rewind`, RewindResult, {
          method: "POST",
          body: { checkpoint, conversation: mode !== "files", files: mode !== "conversation", force },
        });
        setConflict(null);
        return describe(result);
      } catch (err) {
        if (err instanceof BridgeError && err.code === "checkpoint:conflict") {
          const paths = (err.details as { paths?: string[] } | undefined)?.paths ?? [];
          setConflict({ checkpoint, mode, paths });
        }
        throw err;
      }
    });

  const showDiff = (checkpoint: CheckpointView) =>
    act(async () => {
      const diff = await api(`${base}/checkpoints/${encodeURIComponent(checkpoint.id)}/diff`, CheckpointDiff);
      if (onOpenDiff) onOpenDiff(`#${checkpoint.number} → now`, diff.patch);
      else setPreview({ id: checkpoint.id, diff });
      return diff.files.length === 0
        ? `No changes since #${checkpoint.number}.`
        : `${diff.files.length} file(s) differ from #${checkpoint.number}.`;
    });

  const fork = (checkpoint: CheckpointView, worktree: boolean) =>
    act(async () => {
      const result = await api(`${base}/fork`, ForkResult, {
        method: "POST",
        body: { checkpoint: checkpoint.id, worktree },
      });
      onForked?.(result);
      return `Forked into a new session (${result.workspace}).`;
    });

  const actions: CheckpointActions = {
    diff: showDiff,
    rewind: drives ? (checkpoint, mode) => rewind(checkpoint.id, mode) : undefined,
    fork: owner ? fork : undefined,
  };
  const prompts = turnPrompts(state);

  return (
    <div className="flex h-full min-h-0 flex-col text-xs" data-testid="timeline">
      <div className="flex shrink-0 flex-wrap items-center gap-1 border-b border-border px-2 py-1">
        <span className="font-semibold uppercase tracking-wider text-muted">Timeline</span>
        {drives ? (
          <>
            <button
              type="button"
              className="ml-auto rounded px-2 py-0.5 hover:bg-raised disabled:opacity-50"
              disabled={busy || running}
              onClick={() =>
                act(async () => describe(await api(`${base}/undo`, RewindResult, { method: "POST", body: {} })))
              }
              data-testid="timeline-undo-turn"
              title="Rewind conversation and files to the start of the last turn (/undo)"
            >
              Undo last turn
            </button>
            <button
              type="button"
              className="rounded px-2 py-0.5 hover:bg-raised disabled:opacity-50"
              disabled={busy || running}
              onClick={() =>
                act(async () => describe(await api(`${base}/rewind/undo`, RewindResult, { method: "POST", body: {} })))
              }
              data-testid="timeline-undo-rewind"
              title="Go back to the state before the last rewind"
            >
              Undo rewind
            </button>
          </>
        ) : null}
      </div>
      {settings && owner ? (
        <label className="flex shrink-0 items-center gap-1 border-b border-border px-2 py-1 text-muted">
          <input
            type="checkbox"
            checked={settings.dmail_restores_files}
            data-testid="timeline-dmail-files"
            onChange={(event) =>
              api(`${base}/checkpoint-settings`, CheckpointSettings, {
                method: "PATCH",
                body: { dmail_restores_files: event.target.checked },
              }).then(setSettings, (err: Error) => setMessage(err.message))
            }
          />
          D-Mail also restores files
        </label>
      ) : null}
      {message ? (
        <div className="shrink-0 border-b border-border px-2 py-1" data-testid="timeline-message">
          {message}
        </div>
      ) : null}
      {conflict ? (
        <div
          className="shrink-0 border-b border-border bg-warn/10 px-2 py-1"
          role="alert"
          data-testid="timeline-conflict"
        >
          <div>These files were changed outside the agent and would be overwritten:</div>
          <ul className="my-1 font-mono">
            {conflict.paths.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
          <button
            type="button"
            className="rounded bg-danger/20 px-2 py-0.5"
            disabled={busy}
            onClick={() => rewind(conflict.checkpoint, conflict.mode, true)}
            data-testid="timeline-force"
          >
            Overwrite anyway (undoable)
          </button>
          <button type="button" className="ml-1 rounded px-2 py-0.5 hover:bg-raised" onClick={() => setConflict(null)}>
            Keep my edits
          </button>
        </div>
      ) : null}
      <ol className="min-h-0 flex-1 overflow-auto" data-testid="timeline-list">
        {turns.length === 0 ? (
          <li className="p-3 text-muted">No checkpoints yet: one is taken at every turn and step.</li>
        ) : null}
        {turns.map(([turn, rows]) => (
          <TurnRow
            key={turn}
            turn={turn}
            rows={rows}
            prompt={prompts[turn]}
            actions={actions}
            busy={busy}
            running={running}
            preview={preview}
          />
        ))}
      </ol>
    </div>
  );
}

/** The first user message of each turn, by turn number. */
function turnPrompts(state: TranscriptState): Record<number, string> {
  const prompts: Record<number, string> = {};
  for (const item of state.items) {
    if (item.kind !== "user") continue;
    const number = state.turnNumbers?.[item.turnId];
    if (number !== undefined && prompts[number] === undefined) prompts[number] = item.text;
  }
  return prompts;
}

function describe(result: RewindResult): string {
  const parts = [
    result.conversation ? "conversation" : null,
    result.files ? `files (${result.written.length} written, ${result.deleted.length} deleted)` : null,
  ].filter(Boolean);
  const untouched = result.untouched.length ? `; left alone: ${result.untouched.join(", ")}` : "";
  return `Rewound ${parts.join(" and ")}${untouched}. Undo rewind brings it back.`;
}
