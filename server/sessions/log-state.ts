import type { EventEnvelope, SessionEvent } from "../protocol";
import { getSession, type Db } from "../store";
import type { TurnFence } from "../leases";

/** The in-memory state of one session's log and the event log's small helpers (server/sessions/event-log.ts). */

export type Listener = (event: EventEnvelope) => void;
/** Hears events appended by another process (e.g. to drop a cached model context). */
export type ForeignListener = (sessionId: string, event: EventEnvelope) => void;

/** An appended event not yet written (it has no seq until its insert commits). */
export interface Unwritten {
  event: SessionEvent;
  turnId?: string;
  createdAt: Date;
  /** Set for a running turn's events: stored only while its claim holds (server/leases/fence.ts). */
  fence?: TurnFence;
}

export interface SessionLog {
  /** The seq after the last event fanned out here (this process's or another's). */
  nextSeq: number;
  listeners: Set<Listener>;
  /**
   * A delta being coalesced; emitted before any other event of the session. It keeps the fence it
   * was appended under: emitted after its turn ended here (a read flushes it), it is still its turn's.
   */
  pendingDelta: {
    event: Extract<SessionEvent, { type: "message.part.delta" }>;
    turnId?: string;
    fence?: TurnFence;
  } | null;
  deltaTimer: NodeJS.Timeout | null;
  /** (messageId, part) pairs that already emitted their first delta. */
  startedParts: Set<string>;
  /** Appended here, waiting for their insert. */
  unwritten: Unwritten[];
  /** A write of `unwritten` is due (at the end of this tick, or after a failed one). */
  writeScheduled: boolean;
  /** Writes and catch-up reads of this session, one at a time (so neither sees the other's rows half-handled). */
  chain: Promise<void>;
  /** A turn another process runs here (its turn.started seen, its turn.completed not yet). */
  foreignTurn: string | null;
  /** The wait before retrying a failed write; 0 after a write went through (backoff, event-log.ts). */
  retryMs: number;
}

/** A session's log state before anything is appended or fanned out here, its next event numbered `nextSeq`. */
export function emptyLog(nextSeq: number, foreignTurn: string | null): SessionLog {
  return {
    nextSeq,
    listeners: new Set(),
    pendingDelta: null,
    deltaTimer: null,
    startedParts: new Set(),
    unwritten: [],
    writeScheduled: false,
    chain: Promise.resolve(),
    foreignTurn,
    retryMs: 0,
  };
}

/**
 * Takes the unwritten events up to the first of another fence: one insert is conditional on one
 * claim (events of no turn ride along with either).
 */
export function takeBatch(log: SessionLog): Unwritten[] {
  const fence = log.unwritten.find((entry) => entry.fence)?.fence;
  const end = log.unwritten.findIndex((entry) => entry.fence && entry.fence !== fence);
  return log.unwritten.splice(0, end === -1 ? log.unwritten.length : end);
}

export function fanOut(log: SessionLog, envelope: EventEnvelope): void {
  for (const listener of log.listeners) {
    try {
      listener(envelope);
    } catch (error) {
      // One broken subscriber (a closed socket) must not stop the others or the turn.
      console.error("[worldline] event listener failed:", error);
    }
  }
}

export function turnIdOf(boundary: { turnId: string | null; payload: string }): string | null {
  if (boundary.turnId) return boundary.turnId;
  try {
    const payload = JSON.parse(boundary.payload) as { turnId?: unknown };
    return typeof payload.turnId === "string" ? payload.turnId : null;
  } catch {
    // a corrupt payload names no turn
    return null;
  }
}

export function toEnvelope(row: { seq: number; type: string; payload: string; createdAt: Date }): EventEnvelope {
  return {
    seq: row.seq,
    type: row.type,
    payload: JSON.parse(row.payload),
    createdAt: row.createdAt.toISOString(),
  } as EventEnvelope;
}

export async function sessionExists(db: Db, sessionId: string): Promise<boolean> {
  return (await getSession(db, sessionId)) !== null;
}

export function reportError(what: string, error: unknown): void {
  console.error(`[worldline] ${what} failed; will retry:`, error instanceof Error ? error.message : error);
}
