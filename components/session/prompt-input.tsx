"use client";

import { useState, type KeyboardEvent } from "react";
import { command } from "@/components/transport/client";

export function PromptInput({ sessionId, running, stage }: { sessionId: string; running: boolean; stage?: string }) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);

  const send = async () => {
    const prompt = text.trim();
    if (!prompt || sending) return;
    setSending(true);
    setError(null);
    try {
      await command("turn.prompt", { sessionId, text: prompt });
      setText("");
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setSending(false);
    }
  };

  const cancel = async () => {
    try {
      await command("turn.cancel", { sessionId });
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
    if (event.key === "Escape" && running) void cancel();
  };

  return (
    <div className="shrink-0 border-t border-border bg-panel p-3">
      <div className="mx-auto flex max-w-3xl flex-col gap-1">
        {error ? (
          <div className="text-danger" data-testid="prompt-error">
            {error}
          </div>
        ) : null}
        <div className="flex items-end gap-2">
          <textarea
            data-testid="prompt-input"
            aria-label="Message the agent"
            className="min-h-[2.5rem] flex-1 resize-none rounded-md border border-border bg-bg px-3 py-2 outline-none focus:border-accent"
            rows={Math.min(8, Math.max(1, text.split("\n").length))}
            placeholder={running ? "The agent is working… (Esc to stop)" : "Message the agent (Enter to send, Shift+Enter for a new line)"}
            value={text}
            onChange={(event) => setText(event.target.value)}
            onKeyDown={onKeyDown}
          />
          {running ? (
            <button type="button" data-testid="stop-button" onClick={() => void cancel()} className="rounded-md border border-danger/50 px-3 py-2 text-danger hover:bg-danger/10">
              Stop
            </button>
          ) : (
            <button
              type="button"
              data-testid="send-button"
              disabled={!text.trim() || sending}
              onClick={() => void send()}
              className="rounded-md bg-accent px-3 py-2 font-medium text-bg disabled:opacity-40"
            >
              Send
            </button>
          )}
        </div>
        {running ? <div className="text-xs text-muted" data-testid="turn-stage">{stage ?? "working"}…</div> : null}
      </div>
    </div>
  );
}
