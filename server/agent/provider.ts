import { WorldlineError, type ErrorKind } from "../errors";

/** OpenAI-compatible chat messages: the history format and the request format. */
export interface ToolCallMessagePart {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ContentPart[] }
  | { role: "assistant"; content: string | null; reasoning_content?: string; tool_calls?: ToolCallMessagePart[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ToolSpec {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** "none" keeps the tools in the request (its cached prefix) while the model answers without them. */
  toolChoice?: "none";
  reasoning?: "on" | "off";
  /** Groups requests of one conversation on the provider's prompt cache (`prompt_cache_key`): the session id. */
  cacheKey?: string;
  signal: AbortSignal;
  /**
   * Set on calls that are not a turn's own step (e.g. "title"): sent as the X-Worldline-Purpose
   * header, so a proxy's logs (and the tests' fake model) can tell them from the conversation.
   */
  purpose?: string;
}

/** What a provider streams, normalised. */
export type ProviderChunk =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "tool_call"; index: number; id?: string; name?: string; argsDelta: string }
  /** `cachedInputTokens` when the provider reports it (absent = unknown, not zero). */
  | { type: "usage"; inputTokens: number; outputTokens: number; cachedInputTokens?: number }
  | { type: "finish"; reason: string };

export interface ChatProvider {
  stream(request: ChatRequest): AsyncIterable<ProviderChunk>;
}

/** A provider failure, classified for the retry policy. */
export class ProviderError extends WorldlineError {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    options?: { cause?: unknown; kind?: ErrorKind },
  ) {
    super(`provider:${options?.kind ?? (retryable ? "unavailable" : "failed")}`, message, { cause: options?.cause });
  }
}
