"use client";

import { useState } from "react";
import type { CheckpointDiff, CheckpointFile, CheckpointView } from "@/server/protocol";
import { CheckpointMenu, type CheckpointActions } from "./checkpoint-menu";

const REASON_LABEL: Record<string, string> = {
  turn: "Turn start",
  step: "Step",
  turn_end: "Turn end",
  rewind: "Before rewind",
  fork: "Fork start",
  compaction: "Compaction",
  dmail: "D-Mail",
};

/**
 * One turn of the timeline: its prompt and the files it changed in one row, with a menu acting
 * on the turn's start (just before its message); its checkpoints unfold inside, each with the same menu.
 */
export function TurnRow({
  turn,
  rows,
  prompt,
  actions,
  busy,
  running,
  preview,
}: {
  turn: number;
  rows: CheckpointView[];
  prompt?: string;
  actions: CheckpointActions;
  busy: boolean;
  running: boolean;
  preview: { id: string; diff: CheckpointDiff } | null;
}) {
  const [open, setOpen] = useState(false);
  const start = rows.find((row) => row.reason === "turn") ?? rows[0];
  const files = uniqueFiles(rows);
  const outside = files.some((file) => file.outside);
  return (
    <li className="border-b border-border" data-testid={`timeline-turn-${turn}`}>
      <div className="flex items-center gap-1 px-2 py-1.5 hover:bg-raised/50">
        <button
          type="button"
          className="flex min-w-0 flex-1 items-center gap-1 text-left"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
          data-testid={`timeline-turn-toggle-${turn}`}
        >
          <span className="text-muted">{open ? "▾" : "▸"}</span>
          <span className="shrink-0 font-medium">{turn === 0 ? "Start" : `Turn ${turn}`}</span>
          <span className="min-w-0 flex-1 truncate text-muted" title={prompt}>
            {prompt ?? ""}
          </span>
        </button>
        <span className="shrink-0 text-muted" title={files.map((file) => file.path).join("\n")}>
          {files.length > 0 ? `${files.length} file${files.length === 1 ? "" : "s"}` : ""}
          {outside ? <span className="ml-1 text-warn">· edited by you</span> : null}
        </span>
        <time className="shrink-0 text-muted" dateTime={start.created_at}>
          {new Date(start.created_at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })}
        </time>
        <CheckpointMenu
          checkpoint={start}
          actions={actions}
          disabled={busy}
          running={running}
          testId={`timeline-menu-${turn}`}
        />
      </div>
      {open ? (
        <ol className="pb-1 pl-5">
          {rows.map((checkpoint) => (
            <li key={checkpoint.id} className="pr-2" data-testid={`checkpoint-${checkpoint.number}`}>
              <div className="flex items-center gap-1">
                <span className="font-mono text-muted">#{checkpoint.number}</span>
                <span>
                  {REASON_LABEL[checkpoint.reason] ?? checkpoint.reason}
                  {checkpoint.reason === "step" ? ` ${checkpoint.step}` : ""}
                </span>
                <span className="ml-auto truncate font-mono text-muted">
                  {checkpoint.files.map((file) => file.path).join(", ")}
                </span>
                <CheckpointMenu
                  checkpoint={checkpoint}
                  actions={actions}
                  disabled={busy}
                  running={running}
                  testId={`checkpoint-menu-${checkpoint.number}`}
                />
              </div>
              {checkpoint.note ? <div className="text-muted">{checkpoint.note}</div> : null}
              {preview?.id === checkpoint.id ? (
                <pre
                  className="mt-1 max-h-64 overflow-auto whitespace-pre rounded bg-panel p-1 font-mono"
                  data-testid="checkpoint-diff-preview"
                >
                  {preview.diff.patch || "No changes."}
                </pre>
              ) : null}
            </li>
          ))}
        </ol>
      ) : null}
    </li>
  );
}

function uniqueFiles(rows: CheckpointView[]): CheckpointFile[] {
  const byPath = new Map<string, CheckpointFile>();
  for (const row of rows) for (const file of row.files) byPath.set(file.path, file);
  return [...byPath.values()];
}
