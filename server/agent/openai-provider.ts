import type { ModelConfig } from "../config";
import { ProviderError, type ChatProvider, type ChatRequest, type ProviderChunk } from "./provider";
import { recordDetectedForms } from "./provider/detected-forms";
import { readChatStream } from "./provider/read-stream";
import { sseEvents } from "./provider/sse";
import { reasoningHistoryFor, refusesField, withReasoningHistory } from "./provider-quirks";

/** Until the response's headers: a stuck provider becomes a retryable timeout instead of a hung turn. */
const REQUEST_TIMEOUT_MS = 10 * 60_000;

/** Statuses worth retrying: request timeout, conflict, rate limit, server errors. */
const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** How much of an answer that is not a stream (or an error body that is not JSON) an error quotes. */
const QUOTE_CHARS = 300;

/** Where requests go when the configuration names no server. */
const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/**
 * The one adapter: any OpenAI-compatible Chat Completions endpoint, called with `fetch`. The body
 * is read by server/agent/provider/ (the SDK's stream parser turned an error chunk into "HTTP ?"
 * and could not tell a stream cut short from one that ended), so an SDK would only build the
 * request: ~1.5 ms of the event loop per step (headers, encoders, debug formatting) and ~60 ms to
 * load, on the way to every first token.
 */
export function createOpenAIProvider(config: ModelConfig): ChatProvider {
  const url = `${(config.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "")}/chat/completions`;
  const reasoningHistory = reasoningHistoryFor(config);
  // Turned off for good once the server refuses the field (see provider-quirks.ts).
  let sendCacheKey = config.promptCacheKey ?? true;
  const create = async (request: ChatRequest): Promise<Response> => {
    const body = {
      model: request.model,
      messages: withReasoningHistory(request.messages, reasoningHistory),
      tools: request.tools?.length ? request.tools : undefined,
      ...(request.tools?.length && request.toolChoice ? { tool_choice: request.toolChoice } : {}),
      stream: true,
      stream_options: { include_usage: true },
      ...(sendCacheKey && request.cacheKey ? { prompt_cache_key: request.cacheKey } : {}),
      // Kimi/DeepSeek-style switch; providers that don't know it ignore it.
      ...(request.reasoning ? { thinking: { type: request.reasoning === "on" ? "enabled" : "disabled" } } : {}),
    };
    const response = await post(url, config.apiKey, body, request);
    if (response.ok) return response;
    throw await statusError(response);
  };
  return {
    async *stream(request: ChatRequest): AsyncIterable<ProviderChunk> {
      let stream;
      try {
        stream = await create(request);
      } catch (error) {
        const refused =
          sendCacheKey &&
          request.cacheKey &&
          error instanceof StatusError &&
          refusesField(error.status, error.providerMessage, "prompt_cache_key");
        if (!refused) throw toProviderError(error, request.signal);
        sendCacheKey = false;
        try {
          stream = await create(request);
        } catch (again) {
          throw toProviderError(again, request.signal);
        }
      }
      if (!stream.body) throw new ProviderError("The model provider sent an empty body.", stream.status, true);
      if (stream.headers.get("content-type")?.includes("application/json")) {
        // A server that ignores `stream: true`: its answer is not a stream, and asking again changes nothing.
        const text = (await stream.text()).slice(0, QUOTE_CHARS);
        throw new ProviderError(
          `The model provider answered with JSON instead of a stream: ${text}`,
          stream.status,
          false,
        );
      }
      try {
        for await (const chunk of readChatStream(sseEvents(stream.body as unknown as AsyncIterable<Uint8Array>))) {
          // A conversation's answer, not a side call's (titles, memory), is what Settings describes.
          if (chunk.type === "forms" && !request.purpose) {
            recordDetectedForms(config.baseURL, {
              reasoning: chunk.reasoning,
              cache: chunk.cache,
              at: new Date().toISOString(),
            });
          }
          yield chunk;
        }
      } catch (error) {
        throw toProviderError(error, request.signal);
      }
    },
  };
}

/** The request, with the turn's signal and the timeout until the response's headers. */
async function post(url: string, apiKey: string, body: object, request: ChatRequest): Promise<Response> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), REQUEST_TIMEOUT_MS);
  try {
    return await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        accept: "text/event-stream",
        ...(request.purpose ? { "x-worldline-purpose": request.purpose } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.any([request.signal, timeout.signal]),
    });
  } catch (error) {
    if (request.signal.aborted) throw error;
    if (timeout.signal.aborted) {
      throw new ProviderError("The model provider timed out.", undefined, true, undefined, {
        cause: error,
        kind: "timeout",
      });
    }
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, a DNS failure, …) is its cause.
    const cause = (error as { cause?: unknown }).cause;
    const reason = cause instanceof Error ? cause.message : (error as Error).message;
    throw new ProviderError(`Cannot reach the model provider: ${reason}`, undefined, true, undefined, {
      cause: error,
      kind: "connection",
    });
  } finally {
    clearTimeout(timer);
  }
}

/** A provider's error status: its own message (from any of the usual JSON bodies, or the text), retryable or not. */
async function statusError(response: Response): Promise<StatusError> {
  const text = await response.text().catch(() => "");
  const status = response.status;
  const retryable = RETRYABLE_STATUS.has(status) || status >= 500;
  const kind =
    status === 429 ? "rate_limited" : status === 401 || status === 403 ? "auth" : retryable ? "unavailable" : "failed";
  const message = errorMessageOf(text) || `status ${status} with no body`;
  return new StatusError(message, status, retryable, retryAfter(response.headers.get("retry-after")), kind);
}

/** An HTTP error status; `providerMessage` is the provider's own words, for the quirk checks. */
class StatusError extends ProviderError {
  constructor(
    readonly providerMessage: string,
    status: number,
    retryable: boolean,
    retryAfterMs: number | undefined,
    kind: "rate_limited" | "auth" | "unavailable" | "failed",
  ) {
    super(`HTTP ${status}: ${providerMessage}`, status, retryable, retryAfterMs, { kind });
  }
}

/** `{"error": {"message"}}` (OpenAI and most), `{"error": "…"}`, `{"message"}`, `{"detail"}` (FastAPI servers), or the text. */
function errorMessageOf(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text.trim().slice(0, QUOTE_CHARS);
  }
  const record = (body ?? {}) as { error?: unknown; message?: unknown; detail?: unknown };
  const error = record.error as { message?: unknown } | string | undefined;
  const candidates = [typeof error === "object" ? error?.message : error, record.message, record.detail];
  const found = candidates.find((value) => typeof value === "string" && value.length > 0) as string | undefined;
  return found ?? text.trim().slice(0, QUOTE_CHARS);
}

function toProviderError(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted || error instanceof ProviderError) return error;
  // A stream cut mid-way surfaces as a plain error from the body's reader; worth a retry.
  if (error instanceof Error) {
    return new ProviderError(`The model stream failed: ${error.message}`, undefined, true, undefined, {
      cause: error,
      kind: "stream",
    });
  }
  return error;
}

function retryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
