import { approvalsMark, lastEventSeqs, type Db } from "../store";
import type { LogBus, LogBusHooks } from "./types";

/**
 * Processes on one machine sharing the database (the web bridge, `worldline acp`, `worldline
 * run`) re-read the end of the logs someone here watches this often: one indexed query per tick.
 */
const TAIL_INTERVAL_MS = 200;
/**
 * While the database does not answer the tail, the wait between reads doubles up to this: an
 * outage costs a few reads and one log line, not five a second; once back, another process's
 * events arrive at most this late.
 */
const TAIL_BACKOFF_MAX_MS = 5_000;

/**
 * The embedded default: no broker, the database is the channel. Publishing is a no-op (the row
 * is the message); watching is a tail of the watched sessions' last seqs and, while the approval
 * queue is watched, of a mark that moves with every approval request and decision.
 */
export class LocalBus implements LogBus {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** The approvals mark at the last tick that read it (undefined: nobody watched the queue then). */
  private approvals: string | undefined;
  /** The wait before the next read: the interval, doubled after each failed read. */
  private delay: number;
  /** Since when reads fail (null: they go through); the log says so once per change. */
  private failingSince: number | null = null;

  constructor(
    private readonly db: Db,
    private readonly intervalMs = TAIL_INTERVAL_MS,
  ) {
    this.delay = intervalMs;
  }

  published(): void {}

  approvalsChanged(): void {}

  start(hooks: LogBusHooks): void {
    this.running = true;
    this.schedule(hooks);
  }

  async close(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The next read after `delay`; one at a time (the next is scheduled when this one ends). */
  private schedule(hooks: LogBusHooks): void {
    if (!this.running) return;
    this.timer = setTimeout(async () => {
      await this.tick(hooks);
      this.schedule(hooks);
    }, this.delay);
    this.timer.unref();
  }

  private async tick(hooks: LogBusHooks): Promise<void> {
    const known = hooks.watching();
    const approvals = hooks.watchingApprovals();
    if (!approvals) this.approvals = undefined;
    if (known.size === 0 && !approvals) return;
    try {
      const ends = await lastEventSeqs(this.db, [...known.keys()]);
      for (const [sessionId, end] of ends) if (end > (known.get(sessionId) ?? 0)) hooks.ended(sessionId, end);
      if (approvals) {
        const mark = await approvalsMark(this.db);
        // The first read after watching starts tells too: a decision may have come between the ask and this tick.
        if (mark !== this.approvals) hooks.approvalsChanged();
        this.approvals = mark;
      }
      this.succeeded();
    } catch (error) {
      this.failed(error);
    }
  }

  private failed(error: unknown): void {
    this.delay = Math.min(this.delay * 2, Math.max(TAIL_BACKOFF_MAX_MS, this.intervalMs));
    if (this.failingSince !== null) return;
    this.failingSince = Date.now();
    console.error(
      "[worldline] reading other processes' events failed; retrying with backoff:",
      firstLine(messageOf(error)),
    );
  }

  private succeeded(): void {
    this.delay = this.intervalMs;
    if (this.failingSince === null) return;
    const seconds = ((Date.now() - this.failingSince) / 1000).toFixed(1);
    console.error(`[worldline] reading other processes' events again after ${seconds} s`);
    this.failingSince = null;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((line) => line.trim())
      ?.trim()
      .slice(0, 200) ?? "unknown error"
  );
}
