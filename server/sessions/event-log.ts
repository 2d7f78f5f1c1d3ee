import type { EventEnvelope, SessionEvent } from "../protocol";
import { eventAt, getSession, insertEvents, lastEventSeq, readEvents, type Db, type StoredEvent } from "../store";

/** Events of a turn reach the database at least this often (crash loss window ≤ this). */
const PERSIST_INTERVAL_MS = 50;
/** Token deltas arriving within this window become one event: live enough to read, far fewer rows. */
const DELTA_COALESCE_MS = 30;

type Listener = (event: EventEnvelope) => void;

interface SessionLog {
  nextSeq: number;
  listeners: Set<Listener>;
  /** A delta being coalesced; emitted before any other event of the session. */
  pendingDelta: { event: Extract<SessionEvent, { type: "message.part.delta" }>; turnId?: string } | null;
  deltaTimer: NodeJS.Timeout | null;
  /** (messageId, part) pairs that already emitted their first delta. */
  startedParts: Set<string>;
}

/**
 * The authoritative, seq-numbered log of each session. Appends are synchronous
 * (seq assigned and fanned out at once) and persisted in batches; reads flush
 * first, so a reader never misses an appended event.
 */
export class EventLog {
  private readonly sessions = new Map<string, SessionLog>();
  private readonly loading = new Map<string, Promise<SessionLog>>();
  private queue: StoredEvent[] = [];
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly db: Db) {
    this.timer = setInterval(() => void this.flush().catch(reportFlushError), PERSIST_INTERVAL_MS);
    this.timer.unref();
  }

  /** Loads the session's last seq; required once before `append`. */
  async open(sessionId: string): Promise<void> {
    await this.load(sessionId);
  }

  isOpen(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** Appends an event, returning its envelope (for deltas: possibly merged into a pending one). */
  append(sessionId: string, event: SessionEvent, turnId?: string): void {
    const log = this.sessions.get(sessionId);
    if (!log) throw new Error(`event log for session ${sessionId} is not open`);
    if (event.type === "message.part.delta") return this.appendDelta(sessionId, log, event, turnId);
    this.emitPendingDelta(sessionId, log);
    this.emit(sessionId, log, event, turnId);
  }

  subscribe(sessionId: string, listener: Listener): () => void {
    const log = this.sessions.get(sessionId);
    if (!log) throw new Error(`event log for session ${sessionId} is not open`);
    log.listeners.add(listener);
    return () => log.listeners.delete(listener);
  }

  lastSeq(sessionId: string): number {
    const log = this.sessions.get(sessionId);
    return log ? log.nextSeq - 1 : 0;
  }

  /** Events after `afterSeq`, in order, including any not yet persisted. */
  async read(sessionId: string, afterSeq: number, limit?: number): Promise<EventEnvelope[]> {
    const log = this.sessions.get(sessionId);
    if (log) this.emitPendingDelta(sessionId, log);
    await this.flush();
    const rows = await readEvents(this.db, sessionId, afterSeq, limit);
    return rows.map(toEnvelope);
  }

  /** When the event at `seq` was appended (ISO), or null if the log has none there. */
  async createdAtOf(sessionId: string, seq: number): Promise<string | null> {
    await this.flush();
    const row = await eventAt(this.db, sessionId, seq);
    return row ? row.createdAt.toISOString() : null;
  }

  /** Writes everything appended so far. Safe to call concurrently. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.flushing = insertEvents(this.db, batch)
      .catch(async (error: unknown) => {
        // Events of a session deleted meanwhile can never be stored; drop only those,
        // and keep the rest for the next tick (e.g. SQLITE_BUSY past the timeout).
        const alive = await existingSessions(this.db, batch);
        const kept = batch.filter((event) => alive.has(event.sessionId));
        this.queue = kept.concat(this.queue);
        if (kept.length === batch.length) throw error;
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
  }

  /** Forgets an idle session's in-memory state (its listeners must be gone). */
  release(sessionId: string): void {
    const log = this.sessions.get(sessionId);
    if (!log || log.listeners.size > 0 || log.pendingDelta) return;
    this.sessions.delete(sessionId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const [sessionId, log] of this.sessions) this.emitPendingDelta(sessionId, log);
    await this.flush();
  }

  private async load(sessionId: string): Promise<SessionLog> {
    const existing = this.sessions.get(sessionId);
    if (existing) return existing;
    let pending = this.loading.get(sessionId);
    if (!pending) {
      pending = lastEventSeq(this.db, sessionId).then((last) => {
        const log: SessionLog = {
          nextSeq: last + 1,
          listeners: new Set(),
          pendingDelta: null,
          deltaTimer: null,
          startedParts: new Set(),
        };
        this.sessions.set(sessionId, log);
        this.loading.delete(sessionId);
        return log;
      });
      this.loading.set(sessionId, pending);
    }
    return pending;
  }

  private appendDelta(
    sessionId: string,
    log: SessionLog,
    event: Extract<SessionEvent, { type: "message.part.delta" }>,
    turnId?: string,
  ): void {
    const key = `${event.payload.messageId}:${event.payload.part}`;
    const pending = log.pendingDelta;
    if (pending && `${pending.event.payload.messageId}:${pending.event.payload.part}` === key) {
      pending.event = { ...pending.event, payload: { ...pending.event.payload, delta: pending.event.payload.delta + event.payload.delta } };
      return;
    }
    this.emitPendingDelta(sessionId, log);
    if (!log.startedParts.has(key)) {
      // The first token goes out at once: time to first token is what users feel.
      log.startedParts.add(key);
      this.emit(sessionId, log, event, turnId);
      return;
    }
    log.pendingDelta = { event, turnId };
    log.deltaTimer = setTimeout(() => this.emitPendingDelta(sessionId, log), DELTA_COALESCE_MS);
  }

  private emitPendingDelta(sessionId: string, log: SessionLog): void {
    if (log.deltaTimer) clearTimeout(log.deltaTimer);
    log.deltaTimer = null;
    const pending = log.pendingDelta;
    if (!pending) return;
    log.pendingDelta = null;
    this.emit(sessionId, log, pending.event, pending.turnId);
  }

  private emit(sessionId: string, log: SessionLog, event: SessionEvent, turnId?: string): void {
    const createdAt = new Date();
    const envelope = { seq: log.nextSeq++, createdAt: createdAt.toISOString(), ...event } as EventEnvelope;
    this.queue.push({
      sessionId,
      seq: envelope.seq,
      type: event.type,
      payload: JSON.stringify(event.payload),
      turnId: turnId ?? null,
      createdAt,
    });
    if (event.type === "turn.completed") log.startedParts.clear();
    for (const listener of log.listeners) {
      try {
        listener(envelope);
      } catch (error) {
        // One broken subscriber (a closed socket) must not stop the others or the turn.
        console.error("[worldline] event listener failed:", error);
      }
    }
  }
}

function toEnvelope(row: { seq: number; type: string; payload: string; createdAt: Date }): EventEnvelope {
  return { seq: row.seq, type: row.type, payload: JSON.parse(row.payload), createdAt: row.createdAt.toISOString() } as EventEnvelope;
}

async function existingSessions(db: Db, events: StoredEvent[]): Promise<Set<string>> {
  const ids = [...new Set(events.map((event) => event.sessionId))];
  const found = await Promise.all(ids.map(async (id) => ((await getSession(db, id)) ? id : null)));
  return new Set(found.filter((id): id is string => id !== null));
}

function reportFlushError(error: unknown): void {
  console.error("[worldline] persisting events failed; will retry:", error instanceof Error ? error.message : error);
}
