import type { OpenAI } from "openai";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import type { ModelConfig } from "../config";
import { ProviderError, type ChatProvider, type ChatRequest, type ProviderChunk } from "./provider";
import { recordDetectedForms } from "./provider/detected-forms";
import { readChatStream } from "./provider/read-stream";
import { createClient, sdkErrorOf } from "./provider/sdk-client";
import { sseEvents } from "./provider/sse";
import { QUOTE_CHARS, StatusError } from "./provider/status-error";
import { reasoningHistoryFor, refusesField, withReasoningHistory } from "./provider-quirks";

/**
 * The one adapter: any OpenAI-compatible Chat Completions endpoint (Azure's too), called through
 * the `openai` package (server/agent/provider/sdk-client.ts), which builds the request, its auth and
 * its URL. The body is read by server/agent/provider/ from the raw response (`asResponse()`): the
 * SDK's stream parser turned an error chunk into "HTTP ?" and could not tell a stream cut short
 * from one that ended. What the SDK costs against the `http.request` call it replaced: ~110 ms to
 * load (median of 10 runs on a busy 2-core machine), paid on the first model request, not at
 * start-up; ~0.25 ms more per request to the first token (0.30 → 0.56 ms median against a local
 * server: its headers and options, web streams for the body). bench/README.md has the runs.
 */
export function createOpenAIProvider(config: ModelConfig): ChatProvider {
  const reasoningHistory = reasoningHistoryFor(config);
  // Turned off for good once the server refuses the field (see provider-quirks.ts).
  let sendCacheKey = config.promptCacheKey ?? true;
  let client: Promise<OpenAI> | undefined;
  const create = async (request: ChatRequest): Promise<Response> => {
    client ??= createClient(config).catch((error: unknown) => {
      client = undefined;
      throw error;
    });
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
    // Our messages carry fields the SDK's types do not name (reasoning in history, `thinking`).
    const params = body as unknown as ChatCompletionCreateParamsStreaming;
    const headers = request.purpose ? { "x-worldline-purpose": request.purpose } : undefined;
    return (await client).chat.completions.create(params, { signal: request.signal, headers }).asResponse();
  };
  return {
    async *stream(request: ChatRequest): AsyncIterable<ProviderChunk> {
      let response;
      try {
        response = await create(request);
      } catch (error) {
        const refused =
          sendCacheKey &&
          request.cacheKey &&
          error instanceof StatusError &&
          refusesField(error.status, error.providerMessage, "prompt_cache_key");
        if (!refused) throw await toProviderError(error, request.signal);
        sendCacheKey = false;
        try {
          response = await create(request);
        } catch (again) {
          throw await toProviderError(again, request.signal);
        }
      }
      if (response.headers.get("content-type")?.includes("application/json")) {
        // A server that ignores `stream: true`: its answer is not a stream, and asking again changes nothing.
        const text = (await response.text()).slice(0, QUOTE_CHARS);
        throw new ProviderError(
          `The model provider answered with JSON instead of a stream: ${text}`,
          response.status,
          false,
        );
      }
      if (!response.body) throw new ProviderError("The model provider answered with no body.", response.status, true);
      // Read without cancelling the body when the reader stops at [DONE]: the rest (the chunked
      // body's end) is drained below, so the connection is kept for the next step.
      const reader = response.body.getReader();
      try {
        for await (const chunk of readChatStream(sseEvents(bytesOf(reader)))) {
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
        throw await toProviderError(error, request.signal);
      } finally {
        await release(reader);
      }
    },
  };
}

/** A body's pieces; stopping early leaves the body to `release` instead of cancelling it. */
async function* bytesOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

/** How long the end of a body may take after its [DONE] before the connection is closed instead of kept. */
const DRAIN_MS = 1_000;

/**
 * Lets the rest of a stream's body arrive and be discarded, so its keep-alive connection goes back
 * to the pool: otherwise every step opened a new connection (against a hosted provider, a TLS
 * handshake per step). The body's end is normally in hand already; one turn of the event loop lets
 * the socket return before the next step asks for one. A server that keeps sending after [DONE]
 * loses its connection after DRAIN_MS instead (cancelling the body closes it), and holds nothing up meanwhile.
 */
function release(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const timer = setTimeout(() => void reader.cancel().catch(() => undefined), DRAIN_MS);
  timer.unref();
  const drain = async () => {
    while (!(await reader.read()).done) {
      // discarded: the answer is read
    }
  };
  // The answer is read: a reset or an abort of the turn while the rest drains changes nothing.
  void drain()
    .catch(() => undefined)
    .finally(() => clearTimeout(timer));
  return new Promise((resolve) => setImmediate(resolve));
}

async function toProviderError(error: unknown, signal: AbortSignal): Promise<unknown> {
  if (signal.aborted || error instanceof ProviderError) return error;
  const ours = await sdkErrorOf(error);
  if (ours !== error) return ours;
  // A stream cut mid-way surfaces as a plain error from the body's reader; worth a retry.
  if (error instanceof Error) {
    return new ProviderError(`The model stream failed: ${error.message}`, undefined, true, undefined, {
      cause: error,
      kind: "stream",
    });
  }
  return error;
}
