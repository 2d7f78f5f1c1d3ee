"use client";

import { cacheHitPercent, formatCost, type TranscriptState } from "@/server/protocol";
import type { ConnectionState } from "./use-session";

/** One dense line at the bottom: model, context fill, tokens, connection, viewers, approvals. */
export function StatusBar({
  state,
  connection,
  model,
  viewers,
  onShowApprovals,
}: {
  state: TranscriptState;
  connection: ConnectionState;
  model: string | null;
  viewers: number | null;
  onShowApprovals?: () => void;
}) {
  const context = state.context;
  const fill = context && context.window > 0 ? Math.min(1, context.tokens / context.window) : null;
  const pending = Object.keys(state.approvals).length;
  const outputTokens = state.items.length > 0 ? state.lastStats?.output_tokens : undefined;
  const usage = state.usage;
  const cacheHit = usage ? cacheHitPercent(usage.input, usage.cached) : null;
  return (
    <footer
      className="flex h-6 shrink-0 items-center gap-4 overflow-x-auto whitespace-nowrap border-t border-border bg-panel px-3 text-[11px] text-muted"
      data-testid="status-bar"
    >
      <span
        data-testid="connection-state"
        className={connection === "live" ? "text-ok" : "text-warn"}
        title="Connection to the bridge"
      >
        ● {connection}
      </span>
      <span data-testid="status-model" title="Model of this session">
        {model ?? "no model"}
      </span>
      <span
        className="flex items-center gap-1.5"
        data-testid="status-context"
        title={
          context ? `${context.tokens} of ${context.window} tokens` : "Context usage appears after the first answer"
        }
      >
        ctx
        <span className="inline-block h-1.5 w-16 overflow-hidden rounded bg-raised">
          <span
            className={`block h-full ${fill !== null && fill > 0.85 ? "bg-danger" : fill !== null && fill > 0.6 ? "bg-warn" : "bg-accent"}`}
            style={{ width: `${Math.round((fill ?? 0) * 100)}%` }}
          />
        </span>
        {fill !== null ? `${Math.round(fill * 100)}%` : "—"}
      </span>
      {context ? <span data-testid="status-tokens">{formatTokens(context.tokens)} tokens</span> : null}
      {usage ? (
        <span
          data-testid="status-cache"
          title="Share of this session's prompt tokens the provider served from its prompt cache"
        >
          cache {cacheHit === null ? "—" : `${cacheHit}%`}
        </span>
      ) : null}
      {usage ? (
        <span data-testid="status-cost" title="This session's cost so far, at the model's price (Settings)">
          {formatCost(usage.cost)}
        </span>
      ) : null}
      {outputTokens !== undefined ? (
        <span title="Output tokens of the last turn">
          last turn {formatTokens(outputTokens)} out · {state.lastStats?.avg_tokens_per_second.toFixed(0)} tok/s
        </span>
      ) : null}
      {state.running ? (
        <span className="text-accent" data-testid="status-running">
          ● {state.running.stage}
        </span>
      ) : null}
      {state.yolo ? <span className="rounded bg-warn/15 px-1 text-warn">yolo</span> : null}
      <span className="ml-auto" data-testid="status-viewers" title="Tabs viewing this session">
        {viewers === null ? "" : `${viewers} viewer${viewers === 1 ? "" : "s"}`}
      </span>
      <button
        type="button"
        onClick={onShowApprovals}
        className={pending > 0 ? "text-warn" : ""}
        data-testid="status-approvals"
        title="Pending approvals"
      >
        {pending} pending approval{pending === 1 ? "" : "s"}
      </button>
    </footer>
  );
}

function formatTokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}
