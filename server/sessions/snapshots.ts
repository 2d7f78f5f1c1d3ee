import { applyEvents, emptyTranscript, type EventEnvelope, type TranscriptState } from "../protocol";
import type { EventLog } from "./event-log";

/** Below this many events a new tab just gets the log: a snapshot would not be smaller. */
export const SNAPSHOT_MIN_EVENTS = 200;
/** Sessions whose folded state stays in memory; older ones are folded again on demand. */
const MAX_CACHED_SESSIONS = 32;
/** Events read per page while advancing a snapshot: bounds memory on huge logs. */
const READ_PAGE = 5_000;

/**
 * The transcript reducer folded on the bridge, per session, advanced incrementally:
 * a new tab on a long session gets this state and the tail after it instead of every
 * token delta since the start.
 */
export class SnapshotCache {
  private readonly states = new Map<string, TranscriptState>();
  private readonly advancing = new Map<string, Promise<TranscriptState>>();

  constructor(private readonly log: EventLog) {}

  /** The session folded up to (at least) every event appended before this call. */
  async current(sessionId: string): Promise<TranscriptState> {
    let pending = this.advancing.get(sessionId);
    if (!pending) {
      pending = this.advance(sessionId).finally(() => this.advancing.delete(sessionId));
      this.advancing.set(sessionId, pending);
    }
    const state = await pending;
    // Someone appended while we folded: fold the rest too (cheap, incremental).
    return state.lastSeq >= this.log.lastSeq(sessionId) ? state : this.current(sessionId);
  }

  /** Drops a session's state (its log was rewritten, e.g. deleted). */
  forget(sessionId: string): void {
    this.states.delete(sessionId);
  }

  private async advance(sessionId: string): Promise<TranscriptState> {
    let state = this.states.get(sessionId) ?? emptyTranscript();
    for (;;) {
      const page: EventEnvelope[] = await this.log.read(sessionId, state.lastSeq, READ_PAGE);
      if (page.length === 0) break;
      state = applyEvents(state, page);
      if (page.length < READ_PAGE) break;
    }
    this.states.delete(sessionId);
    this.states.set(sessionId, state);
    if (this.states.size > MAX_CACHED_SESSIONS) this.states.delete(this.states.keys().next().value as string);
    return state;
  }
}
