import { errorMessage } from "../errors";
import { describeFault, faultError, storeFault, type StoreFault } from "./faults";

/** First wait after a failed write; doubled after each failure up to RETRY_MAX_MS (short: it bounds how long a turn stays paused after the store is back). */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;
/**
 * How long a write is retried before its caller is told it failed: long enough to ride out a
 * database restart or failover (tens of seconds), short enough that a turn does not hang forever
 * on a disk nobody frees. Tests shorten it (WORLDLINE_STORE_RETRY_MS).
 */
const RETRY_FOR_MS = 120_000;

export interface DurableOptions {
  /** Told once when the write starts waiting on a fault, and again if the fault changes (transcript notices). */
  onWaiting?(fault: StoreFault): void;
  /** Told once the write went through after waiting. */
  onRecovered?(waitedMs: number): void;
  /** Stops retrying (the turn was cancelled): the last error is thrown. */
  signal?: AbortSignal;
  /** Overrides RETRY_FOR_MS. */
  retryForMs?: number;
}

/**
 * What a turn's transcript says while one of its writes or reads waits on the store, and once it
 * goes through ("Database unreachable, retrying…", "The database answers again (after 20.3 s);
 * continuing."): the runtime's writes and the approval gate's tell it alike.
 */
export function turnNotices(
  notice: (text: string, level: "warning" | "info") => void,
): Pick<DurableOptions, "onWaiting" | "onRecovered"> {
  return {
    onWaiting: (fault) => notice(`${capitalize(describeFault(fault))}, retrying…`, "warning"),
    onRecovered: (waitedMs) =>
      notice(`The database answers again (after ${(waitedMs / 1000).toFixed(1)} s); continuing.`, "info"),
  };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The store's state as seen by this process's writes, logged once per change (not per retry):
 * "database unreachable … retrying", then "reachable again after 20.3 s".
 */
class StoreHealth {
  fault: StoreFault | null = null;
  since = 0;

  failed(fault: StoreFault, error: unknown): void {
    if (this.fault === fault) return;
    if (this.fault === null) this.since = Date.now();
    this.fault = fault;
    console.error(`[worldline] ${describeFault(fault)} (${firstLine(error)}); retrying with backoff`);
  }

  succeeded(): void {
    if (this.fault === null) return;
    const seconds = ((Date.now() - this.since) / 1000).toFixed(1);
    console.error(`[worldline] the database answers again after ${seconds} s`);
    this.fault = null;
  }
}

export const storeHealth = new StoreHealth();

/**
 * The durable writer: runs `write` until it goes through, waiting with backoff while the store is
 * unreachable, locked or out of disk. A running turn's reads go through it too (server/agent/runtime.ts),
 * so a short outage pauses the turn instead of failing it. Errors retrying cannot fix (a conflict, a fenced write, a
 * bug) are thrown at once; after `retryForMs` of faults the caller gets a 503-kind error
 * (`store:unavailable` or `disk:full`) saying why. A write must be idempotent or all-or-nothing
 * (every store write is one statement or one transaction), so a retry never duplicates it.
 */
export async function durably<T>(write: () => Promise<T>, options: DurableOptions = {}): Promise<T> {
  const retryFor = options.retryForMs ?? envMs("WORLDLINE_STORE_RETRY_MS") ?? RETRY_FOR_MS;
  const started = Date.now();
  let wait = RETRY_FIRST_MS;
  let told: StoreFault | null = null;
  for (;;) {
    try {
      const result = await write();
      storeHealth.succeeded();
      if (told) options.onRecovered?.(Date.now() - started);
      return result;
    } catch (error) {
      const fault = storeFault(error);
      if (!fault) throw error;
      storeHealth.failed(fault, error);
      if (options.signal?.aborted || Date.now() - started + wait > retryFor) throw faultError(fault, error);
      if (told !== fault) {
        told = fault;
        options.onWaiting?.(fault);
      }
      await sleep(wait, options.signal);
      wait = Math.min(wait * 2, RETRY_MAX_MS);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function firstLine(error: unknown): string {
  return (
    errorMessage(error)
      .split("\n")
      .find((line) => line.trim())
      ?.trim()
      .slice(0, 200) ?? "unknown error"
  );
}

function envMs(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}
