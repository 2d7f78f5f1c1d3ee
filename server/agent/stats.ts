import type { GenerationStats, ModelPrice } from "../protocol";
import { costUsd } from "./pricing";
import type { TokenUsage } from "./provider";

/** Rough tokens for text the provider didn't count: ~4 characters a token for English and code. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Accumulates per-step output rates into the public API's `generation_stats` (server/transport/http/openapi-docs.ts). */
export class StatsCollector {
  private readonly rates: number[] = [];
  /** Output of the attempts that streamed, over `seconds`: what the rates are made of. */
  private tokens = 0;
  private seconds = 0;
  /** Output billed for attempts that failed or were retried: in the totals and the cost, not the rates. */
  private failedTokens = 0;
  /** Provider-reported prompt tokens; null until a step reports them. */
  private input: number | null = null;
  private cached: number | null = null;
  private reasoning: number | null = null;
  private cacheWrite: number | null = null;

  /** `price`: the model's, for `cost_usd` (none: null). */
  constructor(private readonly price?: ModelPrice) {}

  /** A model call's usage as the provider reported it (summary and memory calls count too: they cost the same). */
  addUsage(
    usage: Pick<TokenUsage, "inputTokens" | "cachedInputTokens" | "cacheWriteTokens" | "reasoningTokens"> | undefined,
  ): void {
    if (!usage) return;
    this.input = (this.input ?? 0) + usage.inputTokens;
    if (usage.cachedInputTokens !== undefined) this.cached = (this.cached ?? 0) + usage.cachedInputTokens;
    if (usage.cacheWriteTokens !== undefined) this.cacheWrite = (this.cacheWrite ?? 0) + usage.cacheWriteTokens;
    if (usage.reasoningTokens !== undefined) this.reasoning = (this.reasoning ?? 0) + usage.reasoningTokens;
  }

  /**
   * A request that failed or was retried after the provider reported its usage: billed, so its tokens
   * count in the turn's usage and cost, but not in the tokens-per-second rates (nothing of it was kept).
   */
  addFailedAttempt(usage: TokenUsage): void {
    this.addUsage(usage);
    this.failedTokens += usage.outputTokens;
  }

  addStep(outputTokens: number, seconds: number): void {
    if (outputTokens <= 0) return;
    this.tokens += outputTokens;
    this.seconds += seconds;
    this.rates.push(seconds > 0 ? outputTokens / seconds : outputTokens);
  }

  result(): GenerationStats {
    const round = (n: number) => Math.round(n * 100) / 100;
    const output = this.tokens + this.failedTokens;
    return {
      output_tokens: output,
      // Milliseconds: a fast turn's few hundredths of a second, rounded to two places, made the reported rate
      // disagree with tokens / seconds by 10% and more.
      seconds: Math.round(this.seconds * 1000) / 1000,
      min_tokens_per_second: round(this.rates.length ? Math.min(...this.rates) : 0),
      avg_tokens_per_second: round(this.seconds > 0 ? this.tokens / this.seconds : 0),
      max_tokens_per_second: round(this.rates.length ? Math.max(...this.rates) : 0),
      input_tokens: this.input,
      cached_input_tokens: this.cached,
      reasoning_tokens: this.reasoning,
      cache_write_tokens: this.cacheWrite,
      cost_usd:
        this.input === null
          ? null
          : costUsd({ input_tokens: this.input, cached_input_tokens: this.cached, output_tokens: output }, this.price),
    };
  }
}
