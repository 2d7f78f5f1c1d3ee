import { ProviderError } from "./provider";

export interface RetryPolicy {
  /** Attempts after the first one. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The policy (what is retried, what never is, billing of failed attempts): server/agent/provider/README.md. */

/** A few retries cover the usual rate-limit blips without stalling a turn for minutes. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

/** The wait before retry number `attempt` (1-based): Retry-After when given, else jittered exponential backoff. */
export function retryDelay(error: ProviderError, attempt: number, policy: RetryPolicy, random = Math.random): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, policy.maxDelayMs);
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  // "Full jitter": spreads retries of many clients; never below half the step so it still backs off.
  return Math.round(exponential / 2 + (random() * exponential) / 2);
}

export function isRetryable(error: unknown): error is ProviderError {
  return error instanceof ProviderError && error.retryable;
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
