"use client";

import { useEffect, useRef } from "react";
import type { TranscriptItem, TranscriptState } from "@/server/protocol";

export function Transcript({ state }: { state: TranscriptState }) {
  const bottom = useRef<HTMLDivElement>(null);
  const last = state.items.at(-1);
  const lastSize = last && last.kind === "assistant" ? last.text.length + last.reasoning.length : 0;

  useEffect(() => {
    bottom.current?.scrollIntoView({ block: "end" });
  }, [state.items.length, lastSize]);

  return (
    <div className="min-h-0 flex-1 overflow-y-auto" data-testid="transcript">
      <div className="mx-auto flex max-w-3xl flex-col gap-3 px-4 py-4">
        {state.items.length === 0 ? (
          <p className="py-16 text-center text-muted" data-testid="transcript-empty">
            Ask the agent to read, change or run something in this folder.
          </p>
        ) : null}
        {state.items.map((item) => (
          <Item key={`${item.kind}-${item.id}`} item={item} />
        ))}
        <div ref={bottom} />
      </div>
    </div>
  );
}

function Item({ item }: { item: TranscriptItem }) {
  switch (item.kind) {
    case "user":
      return (
        <div className="self-end whitespace-pre-wrap rounded-md bg-raised px-3 py-2" data-testid="message-user">
          {item.text}
        </div>
      );
    case "assistant":
      return (
        <div className="flex flex-col gap-1" data-testid="message-assistant">
          {item.reasoning ? (
            <details className="text-muted" open={!item.done}>
              <summary className="cursor-pointer select-none text-xs">Thinking</summary>
              <div className="mt-1 whitespace-pre-wrap border-l border-border pl-3 text-xs" data-testid="message-reasoning">
                {item.reasoning}
              </div>
            </details>
          ) : null}
          <div className="whitespace-pre-wrap leading-relaxed" data-testid="message-text">
            {item.text}
          </div>
        </div>
      );
    case "tool":
      return (
        <div className="rounded-md border border-border bg-panel px-3 py-2 font-mono text-xs" data-testid="tool-card" data-state={item.state}>
          <div className="flex gap-2">
            <span className="text-accent">{item.name}</span>
            <span className="truncate text-muted">{JSON.stringify(item.args)}</span>
            <span className="ml-auto text-muted">{item.state}</span>
          </div>
          {item.output ? <pre className="mt-2 max-h-60 overflow-auto whitespace-pre-wrap text-muted">{item.output}</pre> : null}
        </div>
      );
    case "notice":
      return (
        <div
          className={`rounded-md border px-3 py-2 ${item.level === "error" ? "border-danger/40 bg-danger/10 text-danger" : "border-warn/40 bg-warn/10 text-warn"}`}
          data-testid="notice"
        >
          {item.text}
        </div>
      );
    case "retry":
      return (
        <div className="text-xs text-muted" data-testid="retry-notice">
          Retrying (attempt {item.attempt}) in {Math.round(item.delayMs / 100) / 10}s: {item.message}
        </div>
      );
  }
}
