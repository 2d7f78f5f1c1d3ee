import { HIGH_WATERMARK_BYTES, LOW_WATERMARK_BYTES, STALLED_VIEWER_MS } from "./limits";

interface Consumer {
  unacked: number;
  /** Counts toward pausing; a viewer dropped to resync doesn't, the screen mirror always does. */
  counts: boolean;
  /** Never dropped for being slow (the bridge's own screen mirror). */
  pinned: boolean;
  /** When this consumer last went above the high watermark, or null while below it. */
  overSince: number | null;
  /** This consumer's own high and low watermarks. */
  high: number;
  low: number;
}

export interface FlowControlOptions {
  high?: number;
  low?: number;
  stalledMs?: number;
  now?: () => number;
}

/**
 * Ack-based flow control for one pty with several consumers (the screen mirror and
 * every viewer): bytes sent but not yet acknowledged are counted per consumer; the
 * pty should pause when any counting consumer is above the high watermark and resume
 * when all are below the low one. Pure bookkeeping: the caller applies the decisions.
 */
export class FlowControl {
  private readonly consumers = new Map<string, Consumer>();
  private readonly high: number;
  private readonly low: number;
  private readonly stalledMs: number;
  private readonly now: () => number;
  private paused = false;

  constructor(options: FlowControlOptions = {}) {
    this.high = options.high ?? HIGH_WATERMARK_BYTES;
    this.low = options.low ?? LOW_WATERMARK_BYTES;
    this.stalledMs = options.stalledMs ?? STALLED_VIEWER_MS;
    this.now = options.now ?? Date.now;
  }

  add(id: string, options: { pinned?: boolean; high?: number; low?: number } = {}): void {
    this.consumers.set(id, {
      unacked: 0,
      counts: true,
      pinned: options.pinned ?? false,
      overSince: null,
      high: options.high ?? this.high,
      low: options.low ?? this.low,
    });
  }

  remove(id: string): void {
    this.consumers.delete(id);
  }

  sent(id: string, bytes: number): void {
    const consumer = this.consumers.get(id);
    if (!consumer) return;
    consumer.unacked += bytes;
    if (consumer.unacked > consumer.high) consumer.overSince ??= this.now();
  }

  /** Acks larger than what is outstanding (a confused or replaying client) are clamped. */
  acked(id: string, bytes: number): void {
    const consumer = this.consumers.get(id);
    if (!consumer) return;
    consumer.unacked = Math.max(0, consumer.unacked - bytes);
    if (consumer.unacked <= consumer.high) consumer.overSince = null;
  }

  /** Sets what a consumer has outstanding: after a snapshot, exactly the tail that followed it. */
  reset(id: string, unacked: number): void {
    const consumer = this.consumers.get(id);
    if (!consumer) return;
    consumer.unacked = unacked;
    consumer.overSince = unacked > consumer.high ? (consumer.overSince ?? this.now()) : null;
  }

  unacked(id: string): number {
    return this.consumers.get(id)?.unacked ?? 0;
  }

  /** Stops (or restarts) counting a consumer toward pausing; its outstanding bytes are still tracked. */
  setCounting(id: string, counts: boolean): void {
    const consumer = this.consumers.get(id);
    if (consumer) consumer.counts = counts;
  }

  /** "pause" or "resume" when the pty's state should change, else null. */
  decide(): "pause" | "resume" | null {
    const counting = [...this.consumers.values()].filter((consumer) => consumer.counts);
    if (!this.paused && counting.some((consumer) => consumer.unacked > consumer.high)) {
      this.paused = true;
      return "pause";
    }
    if (this.paused && counting.every((consumer) => consumer.unacked < consumer.low)) {
      this.paused = false;
      return "resume";
    }
    return null;
  }

  isPaused(): boolean {
    return this.paused;
  }

  /** Counting, unpinned consumers that have held the pty above the high watermark for too long. */
  stalled(): string[] {
    const now = this.now();
    const ids: string[] = [];
    for (const [id, consumer] of this.consumers) {
      if (
        consumer.counts &&
        !consumer.pinned &&
        consumer.overSince !== null &&
        now - consumer.overSince >= this.stalledMs
      )
        ids.push(id);
    }
    return ids;
  }
}
