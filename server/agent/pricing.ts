import type { ModelPrice } from "../protocol";

/**
 * List prices in USD per million tokens (input, cached input, output) of common models, as published by
 * their providers in 2025. Settings override them per model id (server/settings); a model matched by
 * neither has no cost (shown as "—"), never a guessed one.
 */
const DEFAULT_PRICES: { match: RegExp; price: ModelPrice }[] = [
  { match: /^gpt-4\.1-nano/, price: { input: 0.1, cached_input: 0.025, output: 0.4 } },
  { match: /^gpt-4\.1-mini/, price: { input: 0.4, cached_input: 0.1, output: 1.6 } },
  { match: /^gpt-4\.1/, price: { input: 2, cached_input: 0.5, output: 8 } },
  { match: /^gpt-4o-mini/, price: { input: 0.15, cached_input: 0.075, output: 0.6 } },
  { match: /^gpt-4o/, price: { input: 2.5, cached_input: 1.25, output: 10 } },
  { match: /^gpt-5-nano/, price: { input: 0.05, cached_input: 0.005, output: 0.4 } },
  { match: /^gpt-5-mini/, price: { input: 0.25, cached_input: 0.025, output: 2 } },
  { match: /^gpt-5/, price: { input: 1.25, cached_input: 0.125, output: 10 } },
  { match: /^o4-mini/, price: { input: 1.1, cached_input: 0.275, output: 4.4 } },
  { match: /^deepseek-(chat|reasoner)/, price: { input: 0.28, cached_input: 0.028, output: 0.42 } },
  { match: /^kimi-k2/, price: { input: 0.6, cached_input: 0.15, output: 2.5 } },
  { match: /claude-(sonnet|3-7-sonnet|3-5-sonnet)/, price: { input: 3, cached_input: 0.3, output: 15 } },
  { match: /claude-.*haiku/, price: { input: 0.8, cached_input: 0.08, output: 4 } },
  { match: /claude-opus/, price: { input: 15, cached_input: 1.5, output: 75 } },
  { match: /gemini-2\.5-pro/, price: { input: 1.25, cached_input: 0.31, output: 10 } },
  { match: /gemini-2\.5-flash/, price: { input: 0.3, cached_input: 0.075, output: 2.5 } },
  { match: /qwen3-coder-plus/, price: { input: 1, cached_input: 0.1, output: 5 } },
];

/** Ids as providers spell them (`openai/gpt-4.1`, `accounts/x/models/kimi-k2`): the last path part counts. */
function bareId(model: string): string {
  return model.toLowerCase().split("/").at(-1) ?? model.toLowerCase();
}

/** The defaults, keyed by a representative id, for the Settings page to show and start from. */
export function defaultPrices(): Record<string, ModelPrice> {
  const examples = [
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-5",
    "gpt-5-mini",
    "o4-mini",
    "deepseek-chat",
    "deepseek-reasoner",
    "kimi-k2-0905-preview",
    "claude-sonnet-4",
    "claude-opus-4",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
  ];
  return Object.fromEntries(examples.map((id) => [id, priceFor(id, {})!]));
}

/** The price of a model: the user's own for this id first, then the defaults. */
export function priceFor(model: string, overrides: Record<string, ModelPrice>): ModelPrice | undefined {
  const own = overrides[model] ?? overrides[bareId(model)];
  if (own) return own;
  const id = bareId(model);
  return DEFAULT_PRICES.find((entry) => entry.match.test(id))?.price;
}

export interface TokenUsage {
  input_tokens: number;
  /** Part of `input_tokens` the provider served from its cache; null when it does not say. */
  cached_input_tokens: number | null;
  output_tokens: number;
}

/** USD for the usage at the price; cached input at its own rate (uncached when the provider did not say). */
export function costUsd(usage: TokenUsage, price: ModelPrice | undefined): number | null {
  if (!price) return null;
  const cached = Math.min(usage.cached_input_tokens ?? 0, usage.input_tokens);
  const dollars =
    ((usage.input_tokens - cached) * price.input + cached * price.cached_input + usage.output_tokens * price.output) /
    1_000_000;
  return Math.round(dollars * 1e6) / 1e6;
}
