"use client";

import { useEffect, useRef, useState } from "react";
import type { CheckpointFile, CheckpointView, TranscriptItem, TranscriptState } from "@/server/protocol";
import { canDrive, useAccess } from "@/components/shared/use-access";
import {
  checkpointDiff,
  describeRewind,
  listCheckpoints,
  rewindTo,
  turnStart,
  undoRewind,
  type RewindMode,
} from "./rewind-api";

type UserItem = Extract<TranscriptItem, { kind: "user" }>;

interface Preview {
  checkpoint: CheckpointView;
  files: CheckpointFile[];
}

/**
 * "Rewind" under a user message: puts the conversation and/or the files back to just before
 * that message was sent (the checkpoint taken as its turn started). A preview lists the files
 * that would change; edits made outside the agent are listed and need a confirmation; the
 * result can be undone. Drawn only for a page that may drive the session (a view link sees none).
 */
export function RewindControl({
  item,
  state,
  sessionId,
}: {
  item: UserItem;
  state: TranscriptState;
  sessionId: string;
}) {
  const [open, setOpen] = useState(false);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [mode, setMode] = useState<RewindMode>("both");
  const [conflict, setConflict] = useState<string[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const access = useAccess(sessionId);
  // The panel replaces the button: the keyboard goes into it on open and back to the button on close.
  const panel = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    if (open) panel.current?.focus();
    else if (wasOpen.current) button.current?.focus();
    wasOpen.current = open;
  }, [open]);
  const number = state.turnNumbers?.[item.turnId];
  // Only the message that started its turn: a message steered into a running turn has no checkpoint of its own.
  const first = state.items.find((other) => other.kind === "user" && other.turnId === item.turnId)?.id === item.id;
  if (number === undefined || !first || !canDrive(access)) return null;

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setMessage(null);
    try {
      await work();
    } catch (err) {
      setMessage(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const show = () =>
    run(async () => {
      setOpen(true);
      setConflict(null);
      setDone(false);
      const checkpoint = turnStart(await listCheckpoints(sessionId), number);
      if (!checkpoint) throw new Error("This message has no checkpoint to rewind to.");
      if (!checkpoint.has_snapshot) setMode("conversation");
      const files = checkpoint.has_snapshot ? (await checkpointDiff(sessionId, checkpoint.id)).files : [];
      setPreview({ checkpoint, files });
    });

  const rewind = (force: boolean) =>
    run(async () => {
      if (!preview) return;
      const outcome = await rewindTo(sessionId, preview.checkpoint.id, mode, force);
      if (!outcome.ok) return setConflict(outcome.conflict);
      setConflict(null);
      setDone(true);
      setMessage(describeRewind(outcome.result));
    });

  const undo = () =>
    run(async () => {
      await undoRewind(sessionId);
      setDone(false);
      setOpen(false);
    });

  if (!open) {
    return (
      <button
        ref={button}
        type="button"
        className="rounded px-1.5 text-[11px] text-muted hover:bg-raised hover:text-fg disabled:opacity-40"
        onClick={() => void show()}
        disabled={busy || state.running !== null}
        data-testid="message-rewind"
        title="Restore the conversation and/or files to just before this message"
      >
        ↺ Rewind
      </button>
    );
  }
  return (
    <div
      ref={panel}
      tabIndex={-1}
      className="w-full max-w-[85%] rounded-md border border-border bg-panel p-2 text-xs"
      data-testid="rewind-panel"
      role="dialog"
      aria-label="Rewind to before this message"
      onKeyDown={(event) => {
        if (event.key !== "Escape") return;
        event.stopPropagation(); // Esc here closes the panel, not the running turn
        setOpen(false);
      }}
    >
      <div className="mb-1 font-medium">Rewind to just before this message</div>
      {preview && !done ? (
        <>
          <fieldset className="mb-1 flex flex-wrap gap-x-3 gap-y-1" aria-label="What to rewind">
            {(
              [
                ["both", "Conversation and files"],
                ["conversation", "Conversation only"],
                ["files", "Files only"],
              ] as const
            ).map(([value, label]) => (
              <label key={value} className="flex items-center gap-1">
                <input
                  type="radio"
                  name={`rewind-${item.id}`}
                  checked={mode === value}
                  disabled={value !== "conversation" && !preview.checkpoint.has_snapshot}
                  onChange={() => setMode(value)}
                  data-testid={`rewind-mode-${value}`}
                />
                {label}
              </label>
            ))}
          </fieldset>
          {mode !== "conversation" ? (
            <div data-testid="rewind-preview">
              {preview.files.length === 0 ? (
                <div className="text-muted">No file differs from then.</div>
              ) : (
                <>
                  <div className="text-muted">These files would change:</div>
                  <ul className="my-1 max-h-40 overflow-auto font-mono">
                    {preview.files.map((file) => (
                      <li key={file.path} className="flex gap-2" data-testid="rewind-file">
                        <span className="truncate">{file.path}</span>
                        <span className="ml-auto shrink-0 text-muted">{file.status}</span>
                      </li>
                    ))}
                  </ul>
                </>
              )}
            </div>
          ) : null}
          {conflict ? (
            <div className="my-1 rounded bg-warn/10 p-1.5 text-warn" role="alert" data-testid="rewind-conflict">
              You edited these since; rewinding would overwrite them:
              <ul className="font-mono">
                {conflict.map((path) => (
                  <li key={path}>{path}</li>
                ))}
              </ul>
            </div>
          ) : null}
          <div className="mt-1 flex flex-wrap gap-2">
            <button
              type="button"
              className="min-h-8 rounded bg-accent px-2 py-1 font-medium text-bg disabled:opacity-50"
              disabled={busy}
              onClick={() => void rewind(conflict !== null)}
              data-testid={conflict ? "rewind-force" : "rewind-confirm"}
            >
              {conflict ? "Overwrite my edits (undoable)" : "Rewind"}
            </button>
            <button
              type="button"
              className="min-h-8 rounded px-2 py-1 hover:bg-raised"
              onClick={() => setOpen(false)}
              data-testid="rewind-cancel"
            >
              Cancel
            </button>
          </div>
        </>
      ) : null}
      {message ? (
        <div className="mt-1" data-testid="rewind-message">
          {message}
        </div>
      ) : null}
      {done ? (
        <button
          type="button"
          className="mt-1 min-h-8 rounded border border-border px-2 py-1 hover:bg-raised"
          onClick={() => void undo()}
          disabled={busy}
          data-testid="rewind-undo"
        >
          Undo rewind
        </button>
      ) : null}
    </div>
  );
}

/** "Undo" on the latest rewind notice: after a conversation rewind the message (and its panel) is gone. */
export function RewindUndo({ sessionId, running }: { sessionId: string; running: boolean }) {
  const [state, setState] = useState<"idle" | "busy" | "done" | string>("idle");
  const access = useAccess(sessionId);
  if (state === "done" || !canDrive(access)) return null;
  return (
    <button
      type="button"
      className="ml-2 rounded border border-border px-1.5 text-xs text-fg hover:bg-raised disabled:opacity-50"
      disabled={running || state === "busy"}
      onClick={() => {
        setState("busy");
        undoRewind(sessionId).then(
          () => setState("done"),
          (err: Error) => setState(err.message),
        );
      }}
      data-testid="rewind-notice-undo"
      title={state !== "idle" && state !== "busy" ? state : "Put back what this rewind replaced"}
    >
      Undo
    </button>
  );
}
