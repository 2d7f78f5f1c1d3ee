import type { SubscribeResult } from "./commands";
import type { EventEnvelope } from "./events";
import { decodeSnapshot, type TranscriptSnapshot } from "./sync";
import { applyEvents, emptyTranscript, type TranscriptState } from "./transcript";

/**
 * A tab's copy of one session, kept gap-free: events are applied strictly in seq
 * order. A live event that overtakes the subscribe answer (or arrives after a gap) is
 * held until the events before it are in; `gap()` tells the caller to resubscribe.
 * Shared by the UI hook, the bench and the tests so they all sync the same way.
 */
export class LiveTranscript {
  state: TranscriptState = emptyTranscript();
  /** createdAt of the last applied event: lets the bridge spot a log that lost it in a crash. */
  lastCreatedAt: string | undefined;
  private ahead = new Map<number, EventEnvelope>();

  /** `onApply` sees every event applied, in order (tests and benches compare these lists). */
  constructor(private readonly onApply?: (events: readonly EventEnvelope[], reset: boolean) => void) {}

  /** The subscribe payload that continues from what this copy has. */
  resumeFrom(): { afterSeq: number; afterCreatedAt?: string } {
    return this.state.lastSeq > 0 && this.lastCreatedAt
      ? { afterSeq: this.state.lastSeq, afterCreatedAt: this.lastCreatedAt }
      : { afterSeq: this.state.lastSeq };
  }

  /** Applies a subscribe answer; returns true if the state changed. */
  subscribed(result: SubscribeResult): boolean {
    const before = this.state;
    if (result.reset || result.snapshot) {
      this.state = result.snapshot ? decodeSnapshot(result.snapshot as TranscriptSnapshot) : emptyTranscript();
      this.lastCreatedAt = undefined;
      this.onApply?.([], true);
      // Held live events belong to the log as it is now only if they are past the new start.
      for (const seq of [...this.ahead.keys()]) if (seq <= this.state.lastSeq) this.ahead.delete(seq);
    }
    this.take(result.events);
    return this.state !== before;
  }

  /** Applies live events; returns true if the state changed. */
  live(events: readonly EventEnvelope[]): boolean {
    const before = this.state;
    this.take(events);
    return this.state !== before;
  }

  /** True when events past a hole are waiting: the caller should resubscribe. */
  gap(): boolean {
    return this.ahead.size > 0;
  }

  private take(events: readonly EventEnvelope[]): void {
    for (const event of events) if (event.seq > this.state.lastSeq) this.ahead.set(event.seq, event);
    const ready: EventEnvelope[] = [];
    let next = this.state.lastSeq + 1;
    for (let event = this.ahead.get(next); event; event = this.ahead.get(next)) {
      ready.push(event);
      this.ahead.delete(next);
      next++;
    }
    if (ready.length === 0) return;
    this.state = applyEvents(this.state, ready);
    this.onApply?.(ready, false);
    this.lastCreatedAt = ready[ready.length - 1].createdAt;
  }
}
