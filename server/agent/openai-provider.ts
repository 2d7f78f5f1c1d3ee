import type OpenAI from "openai";
import type { ModelConfig } from "../config";
import { ProviderError, type ChatProvider, type ChatRequest, type ProviderChunk } from "./provider";
import { recordDetectedForms } from "./provider/detected-forms";
import { readChatStream } from "./provider/read-stream";
import { sseEvents } from "./provider/sse";
import { reasoningHistoryFor, refusesField, withReasoningHistory } from "./provider-quirks";

/** Per-request ceiling; a stuck provider becomes a retryable timeout instead of a hung turn. */
const REQUEST_TIMEOUT_MS = 10 * 60_000;

/** Statuses worth retrying: request timeout, conflict, rate limit, server errors. */
const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** How much of a non-stream answer an error quotes. */
const JSON_QUOTE_CHARS = 300;

type Sdk = typeof OpenAI;

/** The SDK (~60 ms to load) is loaded by the first model request, not at start-up. */
let sdkLoading: Promise<Sdk> | undefined;
const loadSdk = (): Promise<Sdk> => (sdkLoading ??= import("openai").then((module) => module.default));

/** The one adapter: any OpenAI-compatible Chat Completions endpoint. */
export function createOpenAIProvider(config: ModelConfig): ChatProvider {
  let client: OpenAI | undefined;
  const clientOf = (Sdk: Sdk) =>
    // The SDK's own retries are off: retry.ts owns the policy and reports each attempt.
    (client ??= new Sdk({
      baseURL: config.baseURL,
      apiKey: config.apiKey,
      maxRetries: 0,
      timeout: REQUEST_TIMEOUT_MS,
    }));
  const reasoningHistory = reasoningHistoryFor(config);
  // Turned off for good once the server refuses the field (see provider-quirks.ts).
  let sendCacheKey = config.promptCacheKey ?? true;
  // The raw response, not the SDK's stream: its parser turns an error chunk into "HTTP ?" and cannot
  // tell a stream cut short from one that ended (server/agent/provider/ reads the body instead).
  const create = (sdk: Sdk, request: ChatRequest) =>
    clientOf(sdk)
      .chat.completions.create(
        {
          model: request.model,
          messages: withReasoningHistory(
            request.messages,
            reasoningHistory,
          ) as OpenAI.Chat.ChatCompletionMessageParam[],
          tools: request.tools?.length ? request.tools : undefined,
          ...(request.tools?.length && request.toolChoice ? { tool_choice: request.toolChoice } : {}),
          stream: true,
          stream_options: { include_usage: true },
          ...(sendCacheKey && request.cacheKey ? { prompt_cache_key: request.cacheKey } : {}),
          // Kimi/DeepSeek-style switch; providers that don't know it ignore it.
          ...(request.reasoning ? { thinking: { type: request.reasoning === "on" ? "enabled" : "disabled" } } : {}),
        } as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
        { signal: request.signal, headers: request.purpose ? { "X-Worldline-Purpose": request.purpose } : undefined },
      )
      .asResponse();
  return {
    async *stream(request: ChatRequest): AsyncIterable<ProviderChunk> {
      const sdk = await loadSdk();
      let stream;
      try {
        stream = await create(sdk, request);
      } catch (error) {
        const refused =
          sendCacheKey &&
          request.cacheKey &&
          error instanceof sdk.APIError &&
          refusesField(error.status, providerMessage(error), "prompt_cache_key");
        if (!refused) throw toProviderError(sdk, error, request.signal);
        sendCacheKey = false;
        try {
          stream = await create(sdk, request);
        } catch (again) {
          throw toProviderError(sdk, again, request.signal);
        }
      }
      if (!stream.body) throw new ProviderError("The model provider sent an empty body.", stream.status, true);
      if (stream.headers.get("content-type")?.includes("application/json")) {
        // A server that ignores `stream: true`: its answer is not a stream, and asking again changes nothing.
        const text = (await stream.text()).slice(0, JSON_QUOTE_CHARS);
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
        throw toProviderError(sdk, error, request.signal);
      }
    },
  };
}

function toProviderError(sdk: Sdk, error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted || error instanceof ProviderError) return error;
  if (error instanceof sdk.APIConnectionTimeoutError) {
    return new ProviderError("The model provider timed out.", undefined, true, undefined, {
      cause: error,
      kind: "timeout",
    });
  }
  if (error instanceof sdk.APIConnectionError) {
    return new ProviderError(`Cannot reach the model provider: ${error.message}`, undefined, true, undefined, {
      cause: error,
      kind: "connection",
    });
  }
  if (error instanceof sdk.APIError) {
    const status = error.status;
    const retryable = status !== undefined && (RETRYABLE_STATUS.has(status) || status >= 500);
    const message = providerMessage(error);
    const kind =
      status === 429
        ? "rate_limited"
        : status === 401 || status === 403
          ? "auth"
          : retryable
            ? "unavailable"
            : "failed";
    return new ProviderError(`HTTP ${status ?? "?"}: ${message}`, status, retryable, retryAfter(error.headers), {
      cause: error,
      kind,
    });
  }
  // A stream cut mid-way surfaces as a plain error from the SSE decoder; worth a retry.
  if (error instanceof Error) {
    return new ProviderError(`The model stream failed: ${error.message}`, undefined, true, undefined, {
      cause: error,
      kind: "stream",
    });
  }
  return error;
}

function providerMessage(error: InstanceType<typeof OpenAI.APIError>): string {
  const body = error.error as { message?: string } | undefined;
  return body?.message ?? error.message;
}

function retryAfter(headers: Headers | Record<string, string> | undefined): number | undefined {
  if (!headers) return undefined;
  const value = headers instanceof Headers ? headers.get("retry-after") : headers["retry-after"];
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
