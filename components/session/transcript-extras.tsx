"use client";

import { useState } from "react";
import {
  cacheHitPercent,
  formatCost,
  type GenerationStats,
  type TranscriptItem,
  type UserImageRef,
} from "@/server/protocol";
import { command } from "@/components/transport/client";
import { ImageIcon } from "@/components/shared/icons";
import { RESUME_PROMPT } from "./resume";
import { canDrive, useAccess } from "@/components/shared/use-access";

/** Thumbnails of the images a user message carried (the log keeps previews, not the images). */
export function UserImages({ images }: { images: UserImageRef[] }) {
  return (
    <span className="mb-1.5 flex flex-wrap justify-end gap-1.5" data-testid="message-images">
      {images.map((image, i) =>
        image.preview ? (
          <img
            key={i}
            src={image.preview}
            alt={`Attached image ${i + 1} (${image.mediaType})`}
            className="max-h-32 max-w-[12rem] rounded border border-border object-contain"
            data-testid="message-image"
          />
        ) : (
          <span
            key={i}
            className="rounded border border-border px-2 py-1 text-xs text-muted"
            data-testid="message-image"
          >
            <ImageIcon /> {image.mediaType.replace("image/", "")} · {Math.max(1, Math.round(image.bytes / 1024))} KB
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
export function InterruptedTurn({
  item,
  sessionId,
  running,
}: {
  item: Extract<TranscriptItem, { kind: "interrupted" }>;
  sessionId?: string;
  running: boolean;
}) {
  const [state, setState] = useState<{ busy: boolean; error?: string }>({ busy: false });
  const access = useAccess(sessionId);
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
  // Once another turn has started (this Resume or any prompt) the notice above says enough.
  if (!item.resumable || !sessionId || !canDrive(access)) return null;
  return (
    <div
      className="flex flex-wrap items-center gap-2 rounded-md border border-dashed border-warn/40 px-3 py-1.5 text-xs text-muted"
      data-testid="turn-interrupted"
    >
      <span className="min-w-0 flex-1">
        The agent can pick up where this turn stopped; what it was doing then did not finish.
      </span>
      <button
        type="button"
        onClick={() => void resume()}
        disabled={state.busy || running}
        className="rounded bg-warn/90 px-2.5 py-0.5 text-sm font-medium text-bg hover:bg-warn disabled:opacity-50"
        title="Start a new turn that continues the task"
        data-testid="resume-turn"
      >
        {state.busy ? "Resuming…" : "Resume"}
      </button>
      {state.error ? <span className="w-full text-danger">{state.error}</span> : null}
    </div>
  );
}

/** Under a turn's last answer: prompt tokens with the share served from cache, output tokens, cost. */
export function TurnFooter({ stats }: { stats: GenerationStats | undefined }) {
  if (!stats || typeof stats.input_tokens !== "number") return null;
  const hit = cacheHitPercent(stats.input_tokens, stats.cached_input_tokens);
  const k = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));
  return (
    <span className="text-[11px] text-muted" data-testid="turn-footer">
      {k(stats.input_tokens)} in{hit === null ? "" : ` (${hit}% cached)`} · {k(stats.output_tokens)} out ·{" "}
      {formatCost(stats.cost_usd)}
    </span>
  );
}
