// Pure builders for the OpenAI Chat Completions wire format; server.ts does the I/O.
import type { ScriptedCompletion, ScriptedToolCall, ScriptedUsage } from "./types.ts";

/** Small deltas force clients to accumulate, as real providers stream a few tokens at a time. */
const DEFAULT_CHUNK_SIZE = 4;
/** The usual rough estimate of characters per token. */
const CHARS_PER_TOKEN = 4;

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  prompt_cache_hit_tokens?: number;
  prompt_cache_miss_tokens?: number;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

export interface Delta {
  role?: "assistant";
  content?: string;
  reasoning_content?: string;
  tool_calls?: ToolCallDelta[];
}

export interface ChunkChoice {
  index: number;
  delta: Delta;
  finish_reason: string | null;
  logprobs: null;
}

export interface Chunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage;
}

/** What every chunk or completion of one response shares. */
export interface ResponseContext {
  id: string;
  created: number;
  model: string;
  promptTokens: number;
  /** Tokens of the prompt found in the fake's prefix cache. */
  cachedTokens: number;
  nextToolCallId: () => string;
}

interface ResolvedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export function splitText(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

export function estimateTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

function resolveToolCalls(calls: ScriptedToolCall[], ctx: ResponseContext): ResolvedToolCall[] {
  return calls.map((call) => ({
    id: call.id ?? ctx.nextToolCallId(),
    name: call.name,
    arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
  }));
}

function resolveUsage(response: ScriptedCompletion, calls: ResolvedToolCall[], ctx: ResponseContext): Usage {
  if (response.usage) return withTotal(response.usage);
  const cached = { prompt_tokens_details: { cached_tokens: ctx.cachedTokens } };
  const completionChars =
    (response.text?.length ?? 0) +
    (response.reasoning?.length ?? 0) +
    calls.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0);
  return withTotal({ prompt_tokens: ctx.promptTokens, completion_tokens: estimateTokens(completionChars), ...cached });
}

function withTotal(usage: ScriptedUsage): Usage {
  return { ...usage, total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens };
}

function finishReasonOf(response: ScriptedCompletion): string {
  return response.finishReason ?? (response.toolCalls?.length ? "tool_calls" : "stop");
}

/**
 * Each call opens with a delta carrying index, id, type and name with empty arguments;
 * its arguments follow in pieces. Parallel calls are emitted round-robin so their
 * argument pieces interleave and a client has to accumulate by index.
 */
function toolCallDeltas(calls: ResolvedToolCall[], size: number): Delta[] {
  const perCall = calls.map((call, index): ToolCallDelta[] => [
    { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
    ...splitText(call.arguments, size).map((piece) => ({ index, function: { arguments: piece } })),
  ]);
  const deltas: Delta[] = [];
  while (perCall.some((queue) => queue.length > 0)) {
    for (const queue of perCall) {
      const next = queue.shift();
      if (next) deltas.push({ tool_calls: [next] });
    }
  }
  return deltas;
}

export function chunk(ctx: ResponseContext, choices: ChunkChoice[]): Chunk {
  return { id: ctx.id, object: "chat.completion.chunk", created: ctx.created, model: ctx.model, choices };
}

function deltaChunk(ctx: ResponseContext, delta: Delta, finishReason: string | null = null): Chunk {
  return chunk(ctx, [{ index: 0, delta, finish_reason: finishReason, logprobs: null }]);
}

export function textDeltaChunks(ctx: ResponseContext, text: string, chunkSize = DEFAULT_CHUNK_SIZE): Chunk[] {
  return [
    deltaChunk(ctx, { role: "assistant", content: "" }),
    ...splitText(text, chunkSize).map((piece) => deltaChunk(ctx, { content: piece })),
  ];
}

/** The whole chunk sequence of a streamed response, ending with the usage chunk (before [DONE]). */
export function completionChunks(response: ScriptedCompletion, ctx: ResponseContext): Chunk[] {
  const size = Math.max(1, response.chunkSize ?? DEFAULT_CHUNK_SIZE);
  const calls = resolveToolCalls(response.toolCalls ?? [], ctx);
  const deltas: Delta[] = [
    { role: "assistant", content: "" },
    ...splitText(response.reasoning ?? "", size).map((piece) => ({ reasoning_content: piece })),
    ...splitText(response.text ?? "", size).map((piece) => ({ content: piece })),
    ...toolCallDeltas(calls, size),
  ];
  return [
    ...deltas.map((delta) => deltaChunk(ctx, delta)),
    deltaChunk(ctx, {}, finishReasonOf(response)),
    { ...chunk(ctx, []), usage: resolveUsage(response, calls, ctx) },
  ];
}

/** The non-streaming `chat.completion` object for the same scripted response. */
export function completionObject(response: ScriptedCompletion, ctx: ResponseContext): Record<string, unknown> {
  const calls = resolveToolCalls(response.toolCalls ?? [], ctx);
  const message: Record<string, unknown> = {
    role: "assistant",
    content: response.text ?? (calls.length > 0 ? null : ""),
    refusal: null,
  };
  if (response.reasoning !== undefined) message.reasoning_content = response.reasoning;
  if (calls.length > 0) {
    message.tool_calls = calls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: ctx.id,
    object: "chat.completion",
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message, finish_reason: finishReasonOf(response), logprobs: null }],
    usage: resolveUsage(response, calls, ctx),
  };
}

const ERROR_DEFAULTS: Record<number, { message: string; type: string; code: string | null }> = {
  400: { message: "Bad request", type: "invalid_request_error", code: null },
  401: { message: "Invalid API key", type: "invalid_request_error", code: "invalid_api_key" },
  403: { message: "Forbidden", type: "invalid_request_error", code: null },
  404: { message: "Not found", type: "invalid_request_error", code: "not_found" },
  429: { message: "Rate limit exceeded", type: "rate_limit_error", code: "rate_limit_exceeded" },
  500: { message: "Internal server error", type: "server_error", code: null },
  502: { message: "Bad gateway", type: "server_error", code: null },
  503: { message: "Service unavailable", type: "server_error", code: null },
};

export function errorBody(status: number, message?: string): { error: Record<string, unknown> } {
  const defaults = ERROR_DEFAULTS[status] ?? {
    message: `Error ${status}`,
    type: status >= 500 ? "server_error" : "invalid_request_error",
    code: null,
  };
  return { error: { message: message ?? defaults.message, type: defaults.type, param: null, code: defaults.code } };
}

/**
 * The user's own words in the last user message (content may be a string or content parts): what
 * Worldline adds for the model (checkpoint markers, the turn's `<context>` block) is left out, so the
 * echo answers what the user typed.
 */
export function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (!isRecord(message) || message.role !== "user") continue;
    return contentText(message.content)
      .replace(/<system>CHECKPOINT \d+<\/system>/g, "")
      .replace(/<context>[\s\S]*?<\/context>/g, "")
      .trim();
  }
  return "";
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(
      (part): part is { type: "text"; text: string } =>
        isRecord(part) && part.type === "text" && typeof part.text === "string",
    )
    .map((part) => part.text)
    .join("");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
