import { BATCH_BUFFER_BYTES } from "./limits";

/**
 * What one viewer of a terminal was sent and has acknowledged, in bytes, over all its attachments: a viewer that
 * detaches and attaches again (a remounted view on the same socket) may still acknowledge what it was sent before.
 */
export interface Ledger {
  sent: number;
  acked: number;
}

/** Used-up buffers kept for the next batches, across all terminals: what a flood needs in flight, and no more idle. */
const FREE_LIMIT = 4;
const free: Buffer[] = [];

interface Used {
  buffer: Buffer;
  /** For each viewer a part of the buffer went to: its `sent` once that part was sent. */
  waits: Map<Ledger, number>;
  /** A viewer left owing a part of it: never reused. */
  abandoned: boolean;
}

/**
 * The buffers a terminal's output is read into (BATCH_BUFFER_BYTES each, several batches per buffer), reused once
 * every viewer has acknowledged what it was sent of them. A flood filled ~200 such buffers (of 512 KB then) per 100 MB: allocated anew, they
 * count as external memory and made V8 run a full garbage collection every few hundred ms, costing the bridge more
 * CPU than reading the pty. A viewer's socket writes a part some time after it was sent, so a buffer is only
 * reusable once each viewer's acknowledgement (its client parsed the bytes, so the socket wrote them) covers it; a
 * viewer that detaches owing a part leaves the buffer to the garbage collector.
 */
export class BatchBuffers {
  private current: Used | null = null;
  private readonly used: Used[] = [];

  /** A buffer for the next batches: a free one, or a new one. */
  take(): Buffer {
    this.retire();
    const buffer = free.pop() ?? Buffer.allocUnsafeSlow(BATCH_BUFFER_BYTES);
    this.current = { buffer, waits: new Map(), abandoned: false };
    return buffer;
  }

  /** A part of the current buffer went to the viewer with `ledger` (its `sent` already counts it). */
  sent(ledger: Ledger): void {
    this.current?.waits.set(ledger, ledger.sent);
  }

  /** The current buffer is used up (the next batch takes another). */
  private retire(): void {
    const current = this.current;
    this.current = null;
    if (!current || current.abandoned) return;
    this.used.push(current);
    this.release();
  }

  /** Frees the used-up buffers that every viewer has acknowledged (after an acknowledgement). */
  release(): void {
    for (let i = this.used.length - 1; i >= 0; i--) {
      if (owed(this.used[i])) continue;
      const [{ buffer }] = this.used.splice(i, 1);
      if (free.length < FREE_LIMIT) free.push(buffer);
    }
  }

  /** The viewer with `ledger` left: what it still owes is never reused (its socket may still be writing it). */
  abandon(ledger: Ledger): void {
    const owes = (used: Used) => (used.waits.get(ledger) ?? 0) > ledger.acked;
    if (this.current && owes(this.current)) this.current.abandoned = true;
    for (let i = this.used.length - 1; i >= 0; i--) if (owes(this.used[i])) this.used.splice(i, 1);
    this.current?.waits.delete(ledger);
    for (const used of this.used) used.waits.delete(ledger);
  }

  /** The terminal is gone: nothing it sent is reused. */
  clear(): void {
    this.current = null;
    this.used.length = 0;
  }
}

function owed(used: Used): boolean {
  for (const [ledger, sent] of used.waits) if (ledger.acked < sent) return true;
  return false;
}
