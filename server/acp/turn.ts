import type * as acp from "@agentclientprotocol/sdk";
import type { PromptOptions } from "../agent";
import type { EventEnvelope, StopReason, TurnOutcome } from "../protocol";
import type { EventLog } from "../sessions";

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface TurnSummary {
  turnId: string;
  outcome: TurnOutcome;
  /** How the last model step ended (the public `stop_reason` of the `done` event). */
  stopReason?: StopReason;
  message?: string;
  /** The last `turn.error` of the turn (e.g. `provider:rate_limited` after retries). */
  error?: { code: string; message: string };
  usage: TurnUsage;
}

/** The one way to turns (server/team TurnRouter): here, or on the bridge that runs the session's turn. */
export interface TurnsPort {
  prompt(sessionId: string, text: string, options?: PromptOptions): Promise<{ turnId: string; queued: boolean }>;
  cancel(sessionId: string): Promise<boolean>;
}

/**
 * Runs one turn and hands every event of the session to `onEvent`, in order,
 * one at a time (each awaited), until the turn completes. Resolves only after
 * the last `onEvent` settled: ACP requires every update before the prompt response.
 * The turn's end is its `turn.completed` event, so a turn the router started on
 * another bridge is followed the same way as one that runs here.
 */
export async function driveTurn(
  deps: { turns: TurnsPort; log: EventLog },
  sessionId: string,
  text: string,
  onEvent: (event: EventEnvelope) => Promise<void> | void,
  options: PromptOptions = {},
): Promise<TurnSummary> {
  const usage: TurnUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  let error: TurnSummary["error"];
  let chain: Promise<void> = Promise.resolve();
  const completed = new Map<string, { outcome: TurnOutcome; message?: string; stopReason?: StopReason }>();
  let onCompleted = () => {};
  const unsubscribe = deps.log.subscribe(sessionId, (event) => {
    if (event.type === "turn.completed") {
      completed.set(event.payload.turnId, event.payload);
      onCompleted();
    }
    if (event.type === "context.usage") {
      usage.inputTokens += event.payload.inputTokens ?? 0;
      usage.outputTokens += event.payload.outputTokens ?? 0;
      usage.totalTokens = usage.inputTokens + usage.outputTokens;
    }
    if (event.type === "turn.error") error = { code: event.payload.code, message: event.payload.message };
    // A failing consumer (a closed client) must not stop the turn; its error is reported once, here.
    chain = chain
      .then(() => onEvent(event))
      .catch((failure: unknown) => console.error("[worldline] forwarding an event failed:", failure));
  });
  try {
    const started = await deps.turns.prompt(sessionId, text, options);
    const result = await new Promise<{ outcome: TurnOutcome; message?: string; stopReason?: StopReason }>((resolve) => {
      onCompleted = () => {
        const end = completed.get(started.turnId);
        if (end) resolve(end);
      };
      onCompleted(); // it may have completed before the prompt answered
    });
    // The turn's end is on disk before the caller answers: another process (a web bridge on the
    // same home) reading the session after the prompt's response must see it.
    await deps.log.flush();
    await chain;
    return {
      turnId: started.turnId,
      outcome: result.outcome,
      stopReason: result.stopReason,
      message: result.message,
      error,
      usage,
    };
  } finally {
    unsubscribe();
  }
}

/** Provider failures worth retrying later (print mode exits 75 on them). */
const RETRYABLE_CODES = new Set([
  "provider:rate_limited",
  "provider:timeout",
  "provider:connection",
  "provider:unavailable",
  "provider:stream",
  "provider:empty",
]);

export function isRetryableError(code: string | undefined): boolean {
  return !!code && RETRYABLE_CODES.has(code);
}

const ERROR_CLASS_BY_CODE: Record<string, string> = {
  "provider:rate_limited": "RateLimitError",
  "provider:timeout": "APITimeoutError",
  "provider:connection": "APIConnectionError",
  "provider:unavailable": "ServerError",
  "provider:stream": "StreamError",
  "provider:auth": "AuthenticationError",
  "provider:failed": "ProviderError",
  "config:no_model": "ConfigurationError",
};

/** `[ERROR] RateLimitError: HTTP 429 …`: the line daemons sniff on stderr to mark a task failed. */
export function errorLine(error: { code: string; message: string }): string {
  return `[ERROR] ${ERROR_CLASS_BY_CODE[error.code] ?? "AgentError"}: ${error.message}`;
}

/** A turn's end as ACP's prompt `stopReason`; `stop`, how the last model step ended, when known. */
export function acpStopReason(outcome: TurnOutcome, stop?: StopReason): acp.StopReason {
  if (outcome === "cancelled" || outcome === "interrupted") return "cancelled";
  if (outcome === "max_steps") return "max_turn_requests";
  if (stop === "truncated") return "max_tokens";
  if (stop === "refused" || stop === "content_filter") return "refusal";
  return "end_turn";
}
