import * as z from "zod";
import type { GenerationStats, ModelPrice } from "../protocol";
import { costUsd } from "../agent";

const Tokens = z.number().int().min(0);

/**
 * The token usage an agent reports with its prompt response (ACP's `usage`, still unstable in the
 * schema): counts of the turn, each optional but input and output.
 */
const AgentUsage = z.object({
  inputTokens: Tokens,
  outputTokens: Tokens,
  totalTokens: Tokens.optional(),
  thoughtTokens: Tokens.nullable().optional(),
  cachedReadTokens: Tokens.nullable().optional(),
  cachedWriteTokens: Tokens.nullable().optional(),
});
type AgentUsage = z.infer<typeof AgentUsage>;

/** The usage of a prompt response; undefined when it has none, or one that does not fit the schema. */
export function usageOf(response: unknown): AgentUsage | undefined {
  const parsed = AgentUsage.safeParse((response as { usage?: unknown }).usage);
  return parsed.success ? parsed.data : undefined;
}

const count = (value: number | null | undefined): number => value ?? 0;

/**
 * The usage in Worldline's terms, where cached input is a part of `input_tokens` and reasoning a part
 * of `output_tokens` (as OpenAI-style providers count them for the built-in loop). ACP defines
 * `totalTokens` as the sum of every kind, so the total tells whether an agent counted the cache reads
 * and the thought tokens apart (opencode does) or inside input and output: those counted apart are
 * added in, never twice.
 */
function readUsage(usage: AgentUsage): {
  input: number;
  cached: number | null;
  output: number;
  reasoning: number | null;
} {
  const input = count(usage.inputTokens);
  const output = count(usage.outputTokens);
  const cacheRead = count(usage.cachedReadTokens);
  const cacheWrite = count(usage.cachedWriteTokens);
  const thought = count(usage.thoughtTokens);
  const total = count(usage.totalTokens);
  const cacheApart = cacheRead + cacheWrite > 0 && total >= input + output + cacheRead + cacheWrite;
  const thoughtApart = thought > 0 && total >= input + output + thought + (cacheApart ? cacheRead + cacheWrite : 0);
  return {
    input: cacheApart ? input + cacheRead + cacheWrite : input,
    cached: typeof usage.cachedReadTokens === "number" ? cacheRead : null,
    output: thoughtApart ? output + thought : output,
    reasoning: typeof usage.thoughtTokens === "number" ? thought : null,
  };
}

/**
 * The turn's stats, like the built-in loop's: the agent's token counts when it reports them, their
 * cost at the model's price (Settings, then the defaults; null for an agent that names no model we
 * price), and one rate over the turn (an agent reports no per-step timing).
 */
export function turnStats(started: number, usage?: AgentUsage, price?: ModelPrice): GenerationStats {
  const seconds = Math.round(((Date.now() - started) / 1000) * 1000) / 1000;
  const read = usage ? readUsage(usage) : undefined;
  const tokens = read?.output ?? 0;
  const rate = seconds > 0 ? Math.round((tokens / seconds) * 100) / 100 : 0;
  return {
    output_tokens: tokens,
    seconds,
    min_tokens_per_second: rate,
    avg_tokens_per_second: rate,
    max_tokens_per_second: rate,
    input_tokens: read ? read.input : null,
    cached_input_tokens: read ? read.cached : null,
    reasoning_tokens: read ? read.reasoning : null,
    cost_usd: read
      ? costUsd({ input_tokens: read.input, cached_input_tokens: read.cached, output_tokens: read.output }, price)
      : null,
  };
}

/**
 * The model an agent says it runs, from its session/new answer: the `model` config option (ACP's
 * session config), or the older unstable `models.currentModelId`.
 */
export function modelOf(created: unknown): string | undefined {
  const answer = created as {
    configOptions?: { category?: string | null; type?: string; currentValue?: unknown }[] | null;
    models?: { currentModelId?: unknown } | null;
  };
  const option = answer.configOptions?.find((o) => o.category === "model" && typeof o.currentValue === "string");
  if (option) return option.currentValue as string;
  return typeof answer.models?.currentModelId === "string" ? answer.models.currentModelId : undefined;
}
