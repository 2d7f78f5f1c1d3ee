import { approvalsMark, lastEventSeqs, type Db } from "../store";
import type { LogBus, LogBusHooks } from "./types";

/**
 * Processes on one machine sharing the database (the web bridge, `worldline acp`, `worldline
 * run`) re-read the end of the logs someone here watches this often: one indexed query per tick.
 */
const TAIL_INTERVAL_MS = 200;

/**
 * The embedded default: no broker, the database is the channel. Publishing is a no-op (the row
 * is the message); watching is a tail of the watched sessions' last seqs and, while the approval
 * queue is watched, of a mark that moves with every approval request and decision.
 */
export class LocalBus implements LogBus {
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  /** The approvals mark at the last tick that read it (undefined: nobody watched the queue then). */
  private approvals: string | undefined;

  constructor(
    private readonly db: Db,
    private readonly intervalMs = TAIL_INTERVAL_MS,
  ) {}

  published(): void {}

  approvalsChanged(): void {}

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
    const approvals = hooks.watchingApprovals();
    if (!approvals) this.approvals = undefined;
    if (this.ticking || (known.size === 0 && !approvals)) return;
    this.ticking = true;
    try {
      const ends = await lastEventSeqs(this.db, [...known.keys()]);
      for (const [sessionId, end] of ends) if (end > (known.get(sessionId) ?? 0)) hooks.ended(sessionId, end);
      if (approvals) {
        const mark = await approvalsMark(this.db);
        // The first read after watching starts tells too: a decision may have come between the ask and this tick.
        if (mark !== this.approvals) hooks.approvalsChanged();
        this.approvals = mark;
      }
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
