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
