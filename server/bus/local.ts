import { lastEventSeqs, type Db } from "../store";
import type { LogBus, LogBusHooks } from "./types";

/**
 * Processes on one machine sharing the database (the web bridge, `worldline acp`, `worldline
 * run`) re-read the end of the logs someone here watches this often: one indexed query per tick.
 */
const TAIL_INTERVAL_MS = 200;

/**
 * The embedded default: no broker, the database is the channel. Publishing is a no-op (the row
 * is the message); watching is a tail of the watched sessions' last seqs.
 */
export class LocalBus implements LogBus {
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;

  constructor(
    private readonly db: Db,
    private readonly intervalMs = TAIL_INTERVAL_MS,
  ) {}

  published(): void {}

  start(hooks: LogBusHooks): void {
    this.timer = setInterval(() => void this.tick(hooks), this.intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(hooks: LogBusHooks): Promise<void> {
    const known = hooks.watching();
    if (this.ticking || known.size === 0) return;
    this.ticking = true;
    try {
      const ends = await lastEventSeqs(this.db, [...known.keys()]);
      for (const [sessionId, end] of ends) if (end > (known.get(sessionId) ?? 0)) hooks.ended(sessionId, end);
    } catch (error) {
      console.error("[worldline] reading other processes' events failed; will retry:", messageOf(error));
    } finally {
      this.ticking = false;
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
