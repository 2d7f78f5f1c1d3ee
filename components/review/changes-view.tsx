"use client";

import { useMemo, useState } from "react";
import type { ReviewFile, TranscriptState } from "@/server/protocol";
import { owns, useAccess } from "@/components/shared/use-access";
import { ShipBar } from "@/components/board/ship-bar";
import type { ShipTarget } from "@/components/board/ship-dialogs";
import { HunkList } from "./hunk-list";
import { MergeDiff, type DiffLayout } from "./merge-diff";
import { useChanges } from "./use-changes";

const STATUS_MARK: Record<ReviewFile["status"], { mark: string; className: string }> = {
  added: { mark: "A", className: "text-ok" },
  modified: { mark: "M", className: "text-warn" },
  deleted: { mark: "D", className: "text-danger" },
  renamed: { mark: "R", className: "text-accent" },
};

/**
 * Review: every file the session changed against its start or a turn's checkpoint, side by side
 * or inline, with accept and revert per hunk and per file. Reverts are checkpointed and undoable
 * (Timeline → Undo rewind, or the rewind notice); accepting marks them reviewed for that base.
 * Only the session's owner reviews; any other page sees the changes without those controls. A
 * worktree session's owner also ships the work from here: commit, merge, push (`ship`).
 */
export function ChangesView({
  sessionId,
  state,
  ship,
  onClose,
}: {
  sessionId: string;
  state: TranscriptState;
  /** The session with its worktree; null or absent for a session in place. */
  ship?: ShipTarget | null;
  onClose?: () => void;
}) {
  const [base, setBase] = useState("start");
  const [layout, setLayout] = useState<DiffLayout>("split");
  const [selected, setSelected] = useState<string | null>(null);
  const prompts = useMemo(() => turnPrompts(state), [state]);
  const version = `${state.reviewVersion ?? 0}:${Object.keys(state.checkpointViews ?? {}).length}:${state.running ? 1 : 0}`;
  const { changes, bases, error, busy, accept, revert } = useChanges(sessionId, base, version, prompts);
  const reviews = owns(useAccess(sessionId));
  const files = changes?.files ?? [];
  const file = files.find((f) => f.path === selected) ?? files.find((f) => !f.accepted) ?? files[0];

  return (
    <div className="@container flex h-full min-h-0 flex-col bg-bg text-sm" data-testid="changes-view">
      <header className="flex shrink-0 flex-wrap items-center gap-2 border-b border-border bg-panel px-3 py-1.5 text-xs">
        <span className="font-semibold uppercase tracking-wider text-muted">Changes</span>
        <span data-testid="changes-pending">
          {changes ? `${changes.pending} of ${files.length} file${files.length === 1 ? "" : "s"} to review` : "…"}
        </span>
        <label className="flex items-center gap-1 text-muted">
          since
          <select
            className="max-w-48 rounded border border-border bg-bg px-1 py-0.5 text-fg"
            value={base}
            onChange={(event) => setBase(event.target.value)}
            data-testid="changes-base"
          >
            {bases.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
        <div className="flex overflow-hidden rounded border border-border" role="group" aria-label="Diff layout">
          {(["split", "inline"] as const).map((value) => (
            <button
              key={value}
              type="button"
              aria-pressed={layout === value}
              className={`px-2 py-0.5 ${layout === value ? "bg-accent/20 text-fg" : "text-muted hover:bg-raised"}`}
              onClick={() => setLayout(value)}
              data-testid={`changes-layout-${value}`}
            >
              {value === "split" ? "Side by side" : "Inline"}
            </button>
          ))}
        </div>
        <span className="ml-auto flex flex-wrap gap-1">
          {reviews && ship?.worktree ? <ShipBar target={ship} running={state.running !== null} /> : null}
          {reviews ? (
            <button
              type="button"
              className="rounded px-2 py-0.5 hover:bg-raised disabled:opacity-50"
              disabled={busy || !changes?.pending}
              onClick={() => void accept({})}
              data-testid="changes-accept-all"
            >
              Accept all
            </button>
          ) : null}
          {onClose ? (
            <button
              type="button"
              className="rounded px-2 py-0.5 hover:bg-raised"
              onClick={onClose}
              aria-label="Close the Changes view"
              data-testid="changes-close"
            >
              ✕
            </button>
          ) : null}
        </span>
      </header>
      {error ? (
        <div className="shrink-0 border-b border-border bg-danger/10 px-3 py-1 text-xs text-danger" role="alert">
          {error}
        </div>
      ) : null}
      <div className="flex min-h-0 flex-1 flex-col @4xl:flex-row">
        <ul
          className="max-h-32 shrink-0 overflow-auto border-b border-border @4xl:max-h-none @4xl:w-60 @4xl:border-b-0 @4xl:border-r"
          aria-label="Changed files"
          data-testid="changes-files"
        >
          {changes && files.length === 0 ? (
            <li className="p-3 text-xs text-muted">No changes since {bases.find((b) => b.value === base)?.label}.</li>
          ) : null}
          {files.map((entry) => (
            <li key={entry.path}>
              <button
                type="button"
                className={`flex w-full items-center gap-2 px-3 py-1 text-left font-mono text-xs ${entry.path === file?.path ? "bg-accent/15 text-fg" : "hover:bg-raised"} ${entry.accepted ? "text-muted" : ""}`}
                onClick={() => setSelected(entry.path)}
                data-testid="changes-file"
                data-path={entry.path}
                data-accepted={entry.accepted}
              >
                <span className={STATUS_MARK[entry.status].className}>{STATUS_MARK[entry.status].mark}</span>
                <span
                  className="min-w-0 flex-1 truncate"
                  title={entry.old_path ? `${entry.old_path} → ${entry.path}` : entry.path}
                >
                  {entry.path}
                </span>
                {entry.accepted ? <span className="text-ok">✓</span> : null}
                <span className="text-ok">+{entry.additions}</span>
                <span className="text-danger">−{entry.deletions}</span>
              </button>
            </li>
          ))}
        </ul>
        {file ? (
          <FileDetail
            key={`${file.path}:${layout}`}
            file={file}
            layout={layout}
            busy={busy}
            reviews={reviews}
            onAccept={(hunk) => void accept({ path: file.path, hunk })}
            onRevert={(hunk) => void revert({ path: file.path, hunk })}
          />
        ) : null}
      </div>
    </div>
  );
}

function FileDetail({
  file,
  layout,
  busy,
  reviews,
  onAccept,
  onRevert,
}: {
  file: ReviewFile;
  layout: DiffLayout;
  busy: boolean;
  reviews: boolean;
  onAccept: (hunk?: string) => void;
  onRevert: (hunk?: string) => void;
}) {
  const shown = file.old_content !== null || file.new_content !== null;
  return (
    <div
      className="flex min-h-0 min-w-0 flex-1 flex-col overflow-auto"
      data-testid="changes-file-detail"
      data-path={file.path}
    >
      <div className="sticky top-0 z-10 flex flex-wrap items-center gap-2 border-b border-border bg-panel px-3 py-1 text-xs">
        <span className="min-w-0 flex-1 truncate font-mono">
          {file.old_path ? `${file.old_path} → ` : ""}
          {file.path}
        </span>
        {file.accepted ? <span className="text-ok">✓ reviewed</span> : null}
        {reviews && !file.accepted ? (
          <button
            type="button"
            className="min-h-7 rounded px-2 hover:bg-raised disabled:opacity-50"
            disabled={busy}
            onClick={() => onAccept()}
            data-testid="file-accept"
          >
            Accept file
          </button>
        ) : null}
        {reviews ? (
          <button
            type="button"
            className="min-h-7 rounded px-2 text-danger hover:bg-danger/10 disabled:opacity-50"
            disabled={busy}
            onClick={() => onRevert()}
            data-testid="file-revert"
            title="Put the whole file back as it was at the base (undoable)"
          >
            {file.status === "added" ? "Delete file" : "Revert file"}
          </button>
        ) : null}
      </div>
      {shown ? (
        <MergeDiff
          path={file.path}
          oldText={file.old_content ?? ""}
          newText={file.new_content ?? ""}
          hunks={file.hunks}
          layout={layout}
        />
      ) : (
        <div className="p-3 text-xs text-muted">
          {file.binary ? "Binary file" : "Too large to show"}
          {reviews ? ": accept or revert it as a whole." : "."}
        </div>
      )}
      <HunkList file={file} busy={busy} reviews={reviews} onAccept={onAccept} onRevert={onRevert} />
    </div>
  );
}

/** The first words of each turn's prompt, by turn number, to name the bases. */
function turnPrompts(state: TranscriptState): Record<number, string> {
  const prompts: Record<number, string> = {};
  for (const item of state.items) {
    const number = item.kind === "user" ? state.turnNumbers?.[item.turnId] : undefined;
    if (item.kind === "user" && number !== undefined && prompts[number] === undefined) prompts[number] = item.text;
  }
  return prompts;
}
