import type { EventEnvelope, SessionEvent } from "../protocol";
import { getSession, type Db, type StoredEvent } from "../store";

/** The in-memory state of one session's log and the event log's small helpers (server/sessions/event-log.ts). */

export type Listener = (event: EventEnvelope) => void;
/** Told when events a listener already got were renumbered (a seq clash with another process). */
export type ResetListener = () => void;
/** Hears events appended by another process (e.g. to drop a cached model context). */
export type ForeignListener = (sessionId: string, event: EventEnvelope) => void;

export interface SessionLog {
  nextSeq: number;
  listeners: Set<Listener>;
  /** A delta being coalesced; emitted before any other event of the session. */
  pendingDelta: { event: Extract<SessionEvent, { type: "message.part.delta" }>; turnId?: string } | null;
  deltaTimer: NodeJS.Timeout | null;
  /** (messageId, part) pairs that already emitted their first delta. */
  startedParts: Set<string>;
  resetListeners: Set<ResetListener>;
  /** When this process last knew the log's end: its own append, or a read of the table. */
  syncedAt: number;
  /** When an event of another process was last seen. */
  foreignAt: number;
  /** A turn another process runs here (its turn.started seen, its turn.completed not yet). */
  foreignTurn: string | null;
  /** Appends waiting for a fresh read of the log's end (another process wrote recently). */
  held: { event: SessionEvent; turnId?: string }[] | null;
  /** Those appends being numbered and written. */
  draining: Promise<void> | null;
  /** A read of the log's end in flight. */
  catchingUp: Promise<void> | null;
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

export async function existingSessions(db: Db, events: StoredEvent[]): Promise<Set<string>> {
  const ids = [...new Set(events.map((event) => event.sessionId))];
  const found = await Promise.all(ids.map(async (id) => ((await getSession(db, id)) ? id : null)));
  return new Set(found.filter((id): id is string => id !== null));
}

export function reportTailError(error: unknown): void {
  console.error(
    "[worldline] reading other processes' events failed; will retry:",
    error instanceof Error ? error.message : error,
  );
}

export function reportFlushError(error: unknown): void {
  console.error("[worldline] persisting events failed; will retry:", error instanceof Error ? error.message : error);
}
