"use client";

import { useEffect, useState } from "react";
import type { SessionSummary } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { PromptInput } from "./prompt-input";
import { Transcript } from "./transcript";
import { useSession } from "./use-session";

export function SessionView({ sessionId }: { sessionId: string }) {
  const { state, connection, error } = useSession(sessionId);
  const [summary, setSummary] = useState<SessionSummary | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  useEffect(() => {
    api<SessionSummary>(`/api/v1/sessions/${encodeURIComponent(sessionId)}`).then(setSummary, (err: Error) => setLoadError(err.message));
  }, [sessionId]);

  useEffect(() => {
    if (state.title) document.title = `${state.title} · Worldline`;
  }, [state.title]);

  if (loadError) {
    return (
      <div className="p-6 text-danger" data-testid="session-error">
        {loadError}
      </div>
    );
  }

  return (
    <div className="flex h-full flex-col">
      <header className="flex h-9 shrink-0 items-center gap-3 border-b border-border px-3 text-muted">
        <span className="truncate font-medium text-fg" data-testid="session-title">
          {state.title ?? summary?.title ?? "…"}
        </span>
        <span className="truncate font-mono text-xs" title={summary?.workspace}>
          {summary?.workspace}
        </span>
        <span className="ml-auto flex items-center gap-3 text-xs">
          {state.yolo ? <span className="rounded bg-warn/15 px-1.5 text-warn">yolo</span> : null}
          <span data-testid="connection-state" className={connection === "live" ? "text-ok" : "text-warn"}>
            ● {connection}
          </span>
        </span>
      </header>
      {error ? <div className="border-b border-border bg-danger/10 px-3 py-1 text-danger">{error}</div> : null}
      <Transcript state={state} />
      <PromptInput sessionId={sessionId} running={state.running !== null} stage={state.running?.stage} />
    </div>
  );
}
