import type { EventEnvelope, SessionEvent } from "../protocol";
import {
  eventAt,
  insertEvents,
  lastEventSeq,
  lastEventSeqs,
  lastTurnBoundary,
  readEvents,
  type Db,
  type StoredEvent,
} from "../store";
import {
  existingSessions,
  fanOut,
  reportFlushError,
  reportTailError,
  toEnvelope,
  turnIdOf,
  type ForeignListener,
  type Listener,
  type ResetListener,
  type SessionLog,
} from "./log-state";

/** Events of a turn reach the database at least this often (crash loss window ≤ this). */
const PERSIST_INTERVAL_MS = 50;
/** Token deltas arriving within this window become one event: live enough to read, far fewer rows. */
const DELTA_COALESCE_MS = 30;

/**
 * Another process (`worldline acp`, `worldline run`, a second bridge) may append to the same
 * database. Sessions someone here listens to are re-read this often when this process has not
 * appended to them for as long; see "Several processes" below.
 */
export const TAIL_INTERVAL_MS = 200;
/** After an event of another process, local appends wait for a fresh read of the log's end this long. */
const FOREIGN_QUIET_MS = 2_000;
/** Events read per query while catching up with another process. */
const TAIL_PAGE = 1_000;

/**
 * The authoritative, seq-numbered log of each session. Appends are synchronous
 * (seq assigned and fanned out at once) and persisted in batches; reads flush
 * first, so a reader never misses an appended event.
 *
 * Several processes. `worldline acp` and `worldline run` run their own bridge on the same
 * database as the web bridge. The process that runs a turn appends its events; the others
 * tail: every TAIL_INTERVAL_MS, sessions with listeners here that this process has not
 * appended to for as long are checked with one indexed query (max seq per session), and
 * new rows are fanned out in order as if appended here (`nextSeq` advances). `open` does
 * the same catch-up for a session idle that long, so an append after it starts past
 * the other process's events. For FOREIGN_QUIET_MS after another process's event, and
 * while another process's turn runs in the session (`runningElsewhere`), local appends
 * are held until the log's end is re-read, then numbered and written at once. If a seq
 * still clashes (both wrote within the same few milliseconds), the insert fails on the
 * (sessionId, seq) unique index: the unwritten local events are renumbered after the
 * other process's and reset listeners are told (tabs resubscribe and start over).
 */
export class EventLog {
  private readonly sessions = new Map<string, SessionLog>();
  private readonly loading = new Map<string, Promise<SessionLog>>();
  private queue: StoredEvent[] = [];
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly tailTimer: NodeJS.Timeout;
  private tailing = false;
  private readonly foreignListeners = new Set<ForeignListener>();
  private closed = false;

  constructor(private readonly db: Db) {
    this.timer = setInterval(() => void this.flush().catch(reportFlushError), PERSIST_INTERVAL_MS);
    this.timer.unref();
    this.tailTimer = setInterval(() => void this.tail().catch(reportTailError), TAIL_INTERVAL_MS);
    this.tailTimer.unref();
  }

  /**
   * Loads the session's last seq; required once before `append`. Later calls catch up with
   * what other processes appended (one indexed query, made while callers read the session row).
   */
  async open(sessionId: string): Promise<void> {
    const loaded = this.sessions.has(sessionId);
    const log = await this.load(sessionId);
    if (loaded && !log.held) await this.catchUp(sessionId, log);
  }

  /** The turn another process runs in this session, as far as this log has seen. */
  runningElsewhere(sessionId: string): string | null {
    return this.sessions.get(sessionId)?.foreignTurn ?? null;
  }

  /** Hears events another process appended (after they were fanned out here). */
  onForeign(listener: ForeignListener): () => void {
    this.foreignListeners.add(listener);
    return () => this.foreignListeners.delete(listener);
  }

  isOpen(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** Appends an event, returning its envelope (for deltas: possibly merged into a pending one). */
  append(sessionId: string, event: SessionEvent, turnId?: string): void {
    const log = this.sessions.get(sessionId);
    if (!log) throw new Error(`event log for session ${sessionId} is not open`);
    if (log.held) return void log.held.push({ event, turnId });
    if (log.foreignTurn !== null || Date.now() - log.foreignAt < FOREIGN_QUIET_MS) {
      // Another process writes here: number this after a fresh read of the log's end.
      this.emitPendingDelta(sessionId, log);
      log.held = [{ event, turnId }];
      log.draining = this.appendHeld(sessionId, log).finally(() => (log.draining = null));
      return;
    }
    this.appendNow(sessionId, log, event, turnId);
  }

  subscribe(sessionId: string, listener: Listener, onReset?: ResetListener): () => void {
    const log = this.sessions.get(sessionId);
    if (!log) throw new Error(`event log for session ${sessionId} is not open`);
    log.listeners.add(listener);
    if (onReset) log.resetListeners.add(onReset);
    return () => {
      log.listeners.delete(listener);
      if (onReset) log.resetListeners.delete(onReset);
    };
  }

  lastSeq(sessionId: string): number {
    const log = this.sessions.get(sessionId);
    return log ? log.nextSeq - 1 : 0;
  }

  /** Events after `afterSeq`, in order, including any not yet persisted. */
  async read(sessionId: string, afterSeq: number, limit?: number): Promise<EventEnvelope[]> {
    const log = this.sessions.get(sessionId);
    if (log?.draining) await log.draining;
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

  /** Writes everything appended so far (held appends included). Safe to call concurrently. */
  async flush(): Promise<void> {
    for (const log of this.sessions.values()) if (log.draining) await log.draining;
    await this.persist();
  }

  private async persist(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    let renumbered = false;
    const batch = this.queue;
    this.queue = [];
    this.flushing = insertEvents(this.db, batch)
      .catch(async (error: unknown) => {
        // Events of a session deleted meanwhile can never be stored; drop only those,
        // and keep the rest for the next tick (e.g. SQLITE_BUSY past the timeout).
        const alive = await existingSessions(this.db, batch);
        const kept = batch.filter((event) => alive.has(event.sessionId));
        this.queue = kept.concat(this.queue);
        // Another process took some of these seqs: renumber ours after its events and retry.
        renumbered = await this.renumberClashes(kept);
        if (kept.length === batch.length && !renumbered) throw error;
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
    if (renumbered) await this.persist();
  }

  /** Forgets an idle session's in-memory state (its listeners must be gone). */
  release(sessionId: string): void {
    const log = this.sessions.get(sessionId);
    if (!log || log.listeners.size > 0 || log.pendingDelta || log.held) return;
    this.sessions.delete(sessionId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.tailTimer);
    for (const [sessionId, log] of this.sessions) this.emitPendingDelta(sessionId, log);
    await this.flush();
  }

  private async load(sessionId: string): Promise<SessionLog> {
    const existing = this.sessions.get(sessionId);
    if (existing) return existing;
    let pending = this.loading.get(sessionId);
    if (!pending) {
      const syncedAt = Date.now();
      pending = Promise.all([lastEventSeq(this.db, sessionId), lastTurnBoundary(this.db, sessionId)]).then(
        ([last, boundary]) => {
          const log: SessionLog = {
            nextSeq: last + 1,
            listeners: new Set(),
            pendingDelta: null,
            deltaTimer: null,
            startedParts: new Set(),
            resetListeners: new Set(),
            syncedAt,
            foreignAt: 0,
            // Nothing runs here before its log is open: a turn started and not completed runs in
            // another process (or one that died; the web bridge's start-up completes those).
            foreignTurn: boundary?.type === "turn.started" ? turnIdOf(boundary) : null,
            held: null,
            draining: null,
            catchingUp: null,
          };
          this.sessions.set(sessionId, log);
          this.loading.delete(sessionId);
          return log;
        },
      );
      this.loading.set(sessionId, pending);
    }
    return pending;
  }

  private appendNow(sessionId: string, log: SessionLog, event: SessionEvent, turnId?: string): void {
    if (event.type === "message.part.delta") return this.appendDelta(sessionId, log, event, turnId);
    this.emitPendingDelta(sessionId, log);
    this.emit(sessionId, log, event, turnId);
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
      pending.event = {
        ...pending.event,
        payload: { ...pending.event.payload, delta: pending.event.payload.delta + event.payload.delta },
      };
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
    log.syncedAt = createdAt.getTime();
    // Other processes learn at once that a turn runs here (they refuse prompts) or ended (they re-read the context).
    if (event.type === "turn.started" || event.type === "turn.completed") void this.persist().catch(reportFlushError);
    if (event.type === "turn.completed") {
      log.startedParts.clear();
      if (event.payload.turnId === log.foreignTurn) log.foreignTurn = null;
    }
    fanOut(log, envelope);
  }

  /** Appends held while another process writes here: numbered after a fresh read of the log's end, written at once. */
  private async appendHeld(sessionId: string, log: SessionLog): Promise<void> {
    try {
      await this.catchUp(sessionId, log);
    } catch (error) {
      reportTailError(error);
    }
    const held = log.held ?? [];
    log.held = null;
    for (const { event, turnId } of held) this.appendNow(sessionId, log, event, turnId);
    await this.persist().catch(reportFlushError);
  }

  /** Fans out (and counts as appended) the events other processes wrote after this log's end. */
  private catchUp(sessionId: string, log: SessionLog): Promise<void> {
    log.catchingUp ??= (async () => {
      try {
        for (;;) {
          const from = log.nextSeq;
          const startedAt = Date.now();
          const rows = await readEvents(this.db, sessionId, from - 1, TAIL_PAGE);
          // Something was appended here meanwhile: a seq it took may clash, and the flush sorts that out.
          if (log.nextSeq !== from || this.sessions.get(sessionId) !== log) return;
          log.syncedAt = Math.max(log.syncedAt, startedAt);
          for (const row of rows) {
            if (row.seq !== log.nextSeq) return;
            log.nextSeq = row.seq + 1;
            const envelope = toEnvelope(row);
            log.foreignAt = Date.now();
            if (envelope.type === "turn.started") log.foreignTurn = envelope.payload.turnId;
            if (envelope.type === "turn.completed") {
              log.startedParts.clear();
              if (envelope.payload.turnId === log.foreignTurn) log.foreignTurn = null;
            }
            fanOut(log, envelope);
            for (const listener of this.foreignListeners) {
              try {
                listener(sessionId, envelope);
              } catch (error) {
                console.error("[worldline] foreign-event listener failed:", error);
              }
            }
          }
          if (rows.length < TAIL_PAGE) return;
        }
      } finally {
        log.catchingUp = null;
      }
    })();
    return log.catchingUp;
  }

  /** One tick of tailing: sessions someone listens to here that this process has not written lately. */
  private async tail(): Promise<void> {
    if (this.tailing || this.closed) return;
    const now = Date.now();
    const due = [...this.sessions].filter(
      ([, log]) => log.listeners.size > 0 && !log.held && !log.catchingUp && now - log.syncedAt >= TAIL_INTERVAL_MS,
    );
    if (due.length === 0) return;
    this.tailing = true;
    try {
      const ends = await lastEventSeqs(
        this.db,
        due.map(([id]) => id),
      );
      for (const [sessionId, log] of due) {
        if (this.sessions.get(sessionId) !== log) continue;
        if ((ends.get(sessionId) ?? 0) >= log.nextSeq) await this.catchUp(sessionId, log);
        else log.syncedAt = Math.max(log.syncedAt, now);
      }
    } finally {
      this.tailing = false;
    }
  }

  /**
   * After a failed insert: for each session whose unwritten events clash with rows another
   * process wrote, renumbers them (in order) after the table's end and resets listeners.
   * True if anything was renumbered.
   */
  private async renumberClashes(failed: StoredEvent[]): Promise<boolean> {
    let renumbered = false;
    for (const sessionId of new Set(failed.map((event) => event.sessionId))) {
      const mine = this.queue.filter((event) => event.sessionId === sessionId).sort((a, b) => a.seq - b.seq);
      if (mine.length === 0) continue;
      const end = await lastEventSeq(this.db, sessionId);
      if (end < mine[0].seq) continue;
      mine.forEach((event, index) => (event.seq = end + 1 + index));
      renumbered = true;
      const log = this.sessions.get(sessionId);
      if (!log) continue;
      log.nextSeq = end + mine.length + 1;
      log.syncedAt = Date.now();
      log.foreignAt = log.syncedAt;
      console.error(
        `[worldline] session ${sessionId}: another process wrote the same seqs; ${mine.length} event(s) renumbered after seq ${end}`,
      );
      for (const reset of log.resetListeners) {
        try {
          reset();
        } catch (error) {
          console.error("[worldline] reset listener failed:", error);
        }
      }
    }
    return renumbered;
  }
}
