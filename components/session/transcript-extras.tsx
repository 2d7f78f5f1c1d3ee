"use client";

import { useState } from "react";
import type { TranscriptItem, UserImageRef } from "@/server/protocol";
import { command } from "@/components/transport/client";
import { RESUME_PROMPT } from "./resume";

/** Thumbnails of the images a user message carried (the log keeps previews, not the images). */
export function UserImages({ images }: { images: UserImageRef[] }) {
  return (
    <span className="mb-1.5 flex flex-wrap justify-end gap-1.5" data-testid="message-images">
      {images.map((image, i) =>
        image.preview ? (
          <img key={i} src={image.preview} alt={`Attached image ${i + 1} (${image.mediaType})`} className="max-h-32 max-w-[12rem] rounded border border-border object-contain" data-testid="message-image" />
        ) : (
          <span key={i} className="rounded border border-border px-2 py-1 text-xs text-muted" data-testid="message-image">
            🖼 {image.mediaType.replace("image/", "")} · {Math.max(1, Math.round(image.bytes / 1024))} KB
          </span>
        ),
      )}
    </span>
  );
}

/**
 * A turn the bridge's restart cut off (its pending approval was marked interrupted).
 * Until another turn starts it offers Resume: a new turn that tells the model to continue.
 */
export function InterruptedTurn({ item, sessionId, running }: { item: Extract<TranscriptItem, { kind: "interrupted" }>; sessionId?: string; running: boolean }) {
  const [state, setState] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const resume = async () => {
    if (!sessionId) return;
    setState({ busy: true });
    try {
      await command("turn.prompt", { sessionId, text: RESUME_PROMPT });
      setState({ busy: false });
    } catch (err) {
      setState({ busy: false, error: err instanceof Error ? err.message : String(err) });
    }
  };
  return (
    <div className="flex flex-wrap items-center gap-2 rounded-md border border-warn/40 bg-warn/10 px-3 py-2 text-warn" data-testid="turn-interrupted" data-resumable={item.resumable}>
      <span className="min-w-0 flex-1">This turn was interrupted: the bridge restarted while it was running.</span>
      {item.resumable && sessionId ? (
        <button
          type="button"
          onClick={() => void resume()}
          disabled={state.busy || running}
          className="rounded border border-warn/60 px-2.5 py-0.5 font-medium text-fg hover:bg-warn/20 disabled:opacity-50"
          title="Start a new turn that continues where this one stopped"
          data-testid="resume-turn"
        >
          {state.busy ? "Resuming…" : "Resume"}
        </button>
      ) : null}
      {state.error ? <span className="w-full text-xs text-danger">{state.error}</span> : null}
    </div>
  );
}
