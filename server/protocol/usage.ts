import type { GenerationStats } from "./events";

/** A session's totals over its turns: prompt tokens, the cached part and cost (null while unknown). */
export interface SessionUsageTotals {
  input: number;
  cached: number | null;
  cost: number | null;
}

/** Adds one turn's stats to the session's totals (the transcript reducer keeps them). */
export function addUsage(total: SessionUsageTotals | undefined, stats: GenerationStats): SessionUsageTotals {
  const sum = (a: number | null | undefined, b: number | null | undefined) =>
    typeof b === "number" ? (a ?? 0) + b : (a ?? null);
  return {
    input: (total?.input ?? 0) + (stats.input_tokens ?? 0),
    cached: sum(total?.cached, stats.cached_input_tokens),
    cost: sum(total?.cost, stats.cost_usd),
  };
}

/** "83%" of the prompt served from the provider's cache, or null when it did not say. */
export function cacheHitPercent(input: number | null | undefined, cached: number | null | undefined): number | null {
  if (typeof cached !== "number" || !input) return null;
  return Math.round((cached / input) * 100);
}

/** Dollars as a person reads them: "$0.0042", "$1.27"; "—" while unknown. */
export function formatCost(usd: number | null | undefined): string {
  if (typeof usd !== "number") return "—";
  if (usd === 0) return "$0";
  return usd < 0.01 ? `$${usd.toPrecision(2)}` : `$${usd.toFixed(2)}`;
}

/** Spend against a budget, "$0.42 / $2.00"; the spend alone without one. */
export function formatSpend(usd: number | null | undefined, budgetUsd: number | null | undefined): string {
  if (typeof budgetUsd !== "number") return formatCost(usd);
  return `${formatCost(usd ?? 0)} / ${formatCost(budgetUsd)}`;
}
