/** How often a wait re-reads its condition: the conditions live in other processes, sockets and files. */
const WAIT_POLL_MS = 20;

/**
 * The test suite's one wait: resolves with the first truthy value of `check` (sync or async), or
 * fails after `timeoutMs` naming `what` (a function, to add what is known only then, e.g. a stderr).
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what: string | (() => string) = "condition",
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}

/**
 * The suite's one deliberate pause: for a duration that is itself what a test is about (an outage held, a quiet
 * window in which nothing may arrive, a file-time granularity window). Anything that happens is awaited with
 * `waitFor` instead. `why` names the duration at the call site, so every pause is found by `hold(` and says why.
 */
export function hold(ms: number, why: string): Promise<void> {
  if (!why) throw new Error("hold needs a reason");
  return new Promise((resolve) => setTimeout(resolve, ms));
}
