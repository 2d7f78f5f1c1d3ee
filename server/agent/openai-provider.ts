import http, { type IncomingMessage } from "node:http";
import https from "node:https";
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
 * The one adapter: any OpenAI-compatible Chat Completions endpoint, called with Node's own HTTP
 * client. The body is read by server/agent/provider/ (the SDK's stream parser turned an error chunk
 * into "HTTP ?" and could not tell a stream cut short from one that ended), so an SDK would only
 * build the request: ~1.5 ms of the event loop per step (headers, encoders, debug formatting) and
 * ~60 ms to load, on the way to every first token. Not `fetch` either: its Request, Headers and web
 * streams cost ~1 ms more per request than `http.request` (bench/ttft.ts, probes on both sides).
 */
export function createOpenAIProvider(config: ModelConfig): ChatProvider {
  const url = `${(config.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "")}/chat/completions`;
  const reasoningHistory = reasoningHistoryFor(config);
  // Turned off for good once the server refuses the field (see provider-quirks.ts).
  let sendCacheKey = config.promptCacheKey ?? true;
  const create = async (request: ChatRequest): Promise<IncomingMessage> => {
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
    if (response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300) return response;
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
      if (stream.headers["content-type"]?.includes("application/json")) {
        // A server that ignores `stream: true`: its answer is not a stream, and asking again changes nothing.
        const text = (await textOf(stream)).slice(0, QUOTE_CHARS);
        throw new ProviderError(
          `The model provider answered with JSON instead of a stream: ${text}`,
          stream.statusCode,
          false,
        );
      }
      try {
        // Read without destroying the body when the reader stops at [DONE]: the rest (the chunked
        // body's end) is drained below, so the connection is kept for the next step.
        const body = stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>;
        for await (const chunk of readChatStream(sseEvents(body))) {
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
      } finally {
        await release(stream);
      }
    },
  };
}

/** How long the end of a body may take after its [DONE] before the connection is closed instead of kept. */
const DRAIN_MS = 1_000;

/**
 * Lets the rest of a stream's body arrive and be discarded, so its keep-alive connection goes back
 * to the pool: otherwise every step opened a new connection (against a hosted provider, a TLS
 * handshake per step). The body's end is normally in hand already; one turn of the event loop lets
 * the socket return before the next step asks for one. A server that keeps sending after [DONE]
 * loses its connection after DRAIN_MS instead, and holds nothing up meanwhile.
 */
function release(response: IncomingMessage): Promise<void> {
  if (response.readableEnded || response.destroyed) return Promise.resolve();
  const timer = setTimeout(() => response.destroy(), DRAIN_MS);
  timer.unref();
  response.once("close", () => clearTimeout(timer));
  // The answer is read: a reset or an abort of the turn while the rest drains changes nothing.
  response.on("error", () => undefined);
  response.resume();
  return new Promise((resolve) => setImmediate(resolve));
}

/** The request, with the turn's signal and the timeout until the response's headers. */
function post(url: string, apiKey: string, body: object, request: ChatRequest): Promise<IncomingMessage> {
  const payload = JSON.stringify(body);
  const client = url.startsWith("https:") ? https : http;
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const req = client.request(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
        accept: "text/event-stream",
        ...(request.purpose ? { "x-worldline-purpose": request.purpose } : {}),
      },
      // Aborting destroys the request, and the response's body with it.
      signal: request.signal,
    });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`));
    }, REQUEST_TIMEOUT_MS);
    req.once("response", (response) => {
      clearTimeout(timer);
      resolve(response);
    });
    req.once("error", (error) => {
      clearTimeout(timer);
      if (request.signal.aborted) return reject(error);
      if (timedOut) {
        return reject(
          new ProviderError("The model provider timed out.", undefined, true, undefined, {
            cause: error,
            kind: "timeout",
          }),
        );
      }
      reject(
        new ProviderError(`Cannot reach the model provider: ${error.message}`, undefined, true, undefined, {
          cause: error,
          kind: "connection",
        }),
      );
    });
    req.end(payload);
  });
}

/** A response's whole body as text. */
async function textOf(response: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of response) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

/** A provider's error status: its own message (from any of the usual JSON bodies, or the text), retryable or not. */
async function statusError(response: IncomingMessage): Promise<StatusError> {
  // A body cut off while read still leaves the status to report: the message is then the status alone.
  const text = await textOf(response).catch(() => "");
  const status = response.statusCode ?? 0;
  const retryable = RETRYABLE_STATUS.has(status) || status >= 500;
  const kind =
    status === 429 ? "rate_limited" : status === 401 || status === 403 ? "auth" : retryable ? "unavailable" : "failed";
  const message = errorMessageOf(text) || `status ${status} with no body`;
  const retryAfterHeader = response.headers["retry-after"];
  return new StatusError(message, status, retryable, retryAfter(retryAfterHeader ?? null), kind);
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
