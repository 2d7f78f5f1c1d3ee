import { WorldlineError, type ErrorKind } from "../errors";
import type { ResponseForms, StopReason } from "../protocol";

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
  | {
      role: "assistant";
      content: string | null;
      reasoning_content?: string;
      /** The form the reasoning arrived in, when not `reasoning_content`: history sends it back the same way. */
      reasoning_form?: Exclude<ReasoningForm, "reasoning_content" | "none">;
      tool_calls?: ToolCallMessagePart[];
    }
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

/** A model call's usage as the provider billed it (absent fields = not reported, not zero). */
export interface TokenUsage {
  /** Every prompt token, cached or not. */
  inputTokens: number;
  /** Every billed output token, reasoning included (also when the provider counts it outside `completion_tokens`). */
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

export type { StopReason };

/** Which of the five forms a provider's reasoning came in (shown in Settings). */
export type ReasoningForm = ResponseForms["reasoning"];

/** What a provider streams, normalised (server/agent/provider/ reads each provider's dialect into these). */
export type ProviderChunk =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "refusal"; delta: string }
  /** `index`: the call's ordinal in the step, assigned by the normaliser (not the provider's own index). */
  | { type: "tool_call"; index: number; id?: string; name?: string; argsDelta: string }
  | ({ type: "usage" } & TokenUsage)
  | { type: "finish"; reason: string }
  /** An error the provider delivered inside a 200 stream; `transient`: a 429/5xx-like condition. */
  | { type: "error"; message: string; code?: string; transient: boolean }
  /** At the end of a stream: the reasoning and cache forms it used. */
  | { type: "forms"; reasoning: ReasoningForm; cache: ResponseForms["cache"] };

/** The forms a provider's last response used, for Settings to show (server/protocol `ResponseForms`). */
export type { ResponseForms };

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
