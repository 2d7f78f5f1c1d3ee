import type { TokenUsage } from "../provider";
import type { RawUsage } from "./chunk";

/** Where a provider reported its prompt-cache reads (shown in Settings, from the last response). */
export type CacheForm =
  "cached_tokens" | "usage_cached_tokens" | "prompt_cache_hit_tokens" | "cache_read_input_tokens" | "none";

/**
 * A usage object in any of the forms providers send:
 * - cached input as OpenAI's `prompt_tokens_details.cached_tokens` (or `usage.cached_tokens`), DeepSeek's
 *   `prompt_cache_hit_tokens`,
 *   or Anthropic's `cache_read_input_tokens` (+ `cache_creation_input_tokens`) that gateways pass through;
 * - Anthropic-style `input_tokens` exclude the cache, so cache reads and writes are added back to make
 *   the prompt total; OpenAI-style `prompt_tokens` already include them;
 * - reasoning tokens: `completion_tokens_details.reasoning_tokens`, part of `completion_tokens` for most
 *   providers but billed on top of it by some (xAI: `total_tokens` = prompt + completion + reasoning);
 *   when the total says so, they are added to the output, so tokens per second and cost are not understated.
 */
export function readUsage(raw: RawUsage): { usage: TokenUsage; cacheForm: CacheForm } {
  const cacheRead =
    raw.prompt_tokens_details?.cached_tokens ??
    raw.cached_tokens ??
    raw.prompt_cache_hit_tokens ??
    raw.cache_read_input_tokens ??
    undefined;
  const cacheForm: CacheForm =
    raw.prompt_tokens_details?.cached_tokens != null
      ? "cached_tokens"
      : raw.cached_tokens != null
        ? "usage_cached_tokens"
        : raw.prompt_cache_hit_tokens != null
          ? "prompt_cache_hit_tokens"
          : raw.cache_read_input_tokens != null
            ? "cache_read_input_tokens"
            : "none";
  const cacheWrite = raw.cache_creation_input_tokens ?? raw.prompt_tokens_details?.cache_write_tokens ?? undefined;
  const anthropicStyle = raw.prompt_tokens == null && raw.input_tokens != null;
  const input = anthropicStyle
    ? (raw.input_tokens ?? 0) + (raw.cache_read_input_tokens ?? 0) + (raw.cache_creation_input_tokens ?? 0)
    : (raw.prompt_tokens ?? 0);
  const completion = raw.completion_tokens ?? raw.output_tokens ?? 0;
  const reasoning = raw.completion_tokens_details?.reasoning_tokens ?? undefined;
  const outside = raw.total_tokens != null ? raw.total_tokens - input - completion : 0;
  const billedOnTop = reasoning !== undefined && reasoning > 0 && outside >= reasoning;
  return {
    usage: {
      inputTokens: input,
      outputTokens: billedOnTop ? completion + reasoning : completion,
      ...(cacheRead !== undefined ? { cachedInputTokens: cacheRead } : {}),
      ...(cacheWrite !== undefined ? { cacheWriteTokens: cacheWrite } : {}),
      ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
    },
    cacheForm,
  };
}
