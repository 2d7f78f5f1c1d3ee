import { LocalBus, type LogBus } from "../bus";
import type { EventEnvelope, SessionEvent } from "../protocol";
import {
  eventAt,
  insertEvents,
  isFenced,
  isUniqueViolation,
  lastEventSeq,
  lastTurnBoundary,
  readEvents,
  storeFault,
  storeHealth,
  type Db,
  type FencedError,
  type StoredEvent,
} from "../store";
import type { TurnFence } from "../leases";
import {
  emptyLog,
  fanOut,
  reportError,
  sessionExists,
  takeBatch,
  toEnvelope,
  turnIdOf,
  type ForeignListener,
  type Listener,
  type SessionLog,
  type Unwritten,
} from "./log-state";

/** Token deltas arriving within this window become one event: live enough to read, far fewer rows. */
const DELTA_COALESCE_MS = 30;
/** A write that failed (a lock held past the busy timeout, a dropped connection) is retried after this. */
const WRITE_RETRY_MS = 50;
/** Retries of a failing write back off (doubling) up to this: an outage is not hammered 20 times a second. */
const WRITE_RETRY_MAX_MS = 2_000;
/** Seq clashes in a row before a write gives up until the next append: only a storm of writers gets there. */
const WRITE_TRIES = 20;
/** Events read per query while catching up with another process. */
const CATCH_UP_PAGE = 1_000;

/**
 * The authoritative, seq-numbered log of each session.
 *
 * A seq is given in one place: the insert. `append` queues the event; the events appended in
 * one tick are inserted together with the seqs after the last one known here, and a clash on the
 * (sessionId, seq) unique index means another process wrote first: its rows are read and fanned
 * out, and the insert is retried after them. Listeners hear an event only once its row is
 * committed, so a seq they saw never changes and a reader of the table never misses one.
 *
 * Several processes (`worldline acp`, `worldline run`, more bridges) share the database. A bus
 * (server/bus: the database tail on one machine, Redis in team mode) tells this log when another
 * process wrote to a session someone here listens to; its rows are then read and fanned out in
 * order, as if appended here. `open` catches a session up the same way.
 *
 * A running turn's events are fenced on its claim (`fence`, ARCHITECTURE.md "Fencing"): a batch of
 * them is stored only while the session is at the claim's epoch. A refused batch is neither stored
 * nor fanned out, the turn is told through its fence and nothing more of it is written, and the log
 * catches up with the store (the new holder's events), so its next seq is the store's again.
 */
type EveryListener = (sessionId: string, event: EventEnvelope, foreign: boolean) => void;

interface ApprovalWatcher {
  wanted(): boolean;
  changed(): void;
}

export class EventLog {
  private readonly sessions = new Map<string, SessionLog>();
  private readonly loading = new Map<string, Promise<SessionLog>>();
  private readonly foreignListeners = new Set<ForeignListener>();
  private readonly everyListeners = new Set<EveryListener>();
  private readonly elsewhereListeners = new Set<(sessionId: string) => void>();
  private readonly approvalWatchers = new Set<ApprovalWatcher>();
  /** The fence of the turn this process runs in each session (set while it runs). */
  private readonly fences = new Map<string, TurnFence>();
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly bus: LogBus = new LocalBus(db),
  ) {
    bus.start({
      watching: () => new Map([...this.sessions].filter(([, log]) => log.listeners.size > 0).map(watched)),
      ended: (sessionId, seq) => {
        const log = this.sessions.get(sessionId);
        if (log && seq >= log.nextSeq) void this.serial(log, () => this.catchUp(sessionId, log)).catch(reportTail);
      },
      elsewhere: (sessionId) => {
        for (const listener of this.elsewhereListeners) listener(sessionId);
      },
      watchingApprovals: () => [...this.approvalWatchers].some((watcher) => watcher.wanted()),
      approvalsChanged: () => {
        for (const watcher of this.approvalWatchers) watcher.changed();
      },
    });
  }

  /**
   * Hears, through the bus, that another process created or decided an approval request
   * (server/approvals), for as long as `wanted()` says someone here listens or waits.
   */
  watchApprovals(watcher: ApprovalWatcher): () => void {
    this.approvalWatchers.add(watcher);
    return () => this.approvalWatchers.delete(watcher);
  }

  /** Tells other processes that this one created or decided an approval request. */
  approvalsChanged(): void {
    this.bus.approvalsChanged();
  }

  /**
   * `open` for a session this process has just created, whose log is empty: without the two
   * queries that read the last seq and turn boundary (each the first of its shape in a new
   * process, compiled by Prisma on the way to print mode's and an editor's first reply). Nobody
   * else knows the session yet; a later `open` catches up as usual.
   */
  openNew(sessionId: string): void {
    if (!this.sessions.has(sessionId) && !this.loading.has(sessionId)) this.sessions.set(sessionId, emptyLog(1, null));
  }

  /** Loads the session's last seq; required once before `append`. Later calls catch up with other processes. */
  async open(sessionId: string): Promise<void> {
    const loaded = this.sessions.has(sessionId);
    const log = await this.load(sessionId);
    if (loaded) await this.serial(log, () => this.catchUp(sessionId, log));
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

  /**
   * Hears every event fanned out here, of every session this process appends to or follows
   * (`foreign`: another process wrote it): the board's cards and the worktrees' diff stats.
   */
  onEvery(listener: EveryListener): () => void {
    this.everyListeners.add(listener);
    return () => this.everyListeners.delete(listener);
  }

  /** Hears, through the bus (team mode), that another process wrote to a session this one follows not. */
  onElsewhere(listener: (sessionId: string) => void): () => void {
    this.elsewhereListeners.add(listener);
    return () => this.elsewhereListeners.delete(listener);
  }

  isOpen(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /**
   * Fences the turn's events (those appended with its id) on its claim until the returned function
   * is called; its checkpoint rows and approval requests are fenced on it too (`fenceOf`).
   */
  fence(fence: TurnFence): () => void {
    this.fences.set(fence.sessionId, fence);
    return () => {
      if (this.fences.get(fence.sessionId) === fence) this.fences.delete(fence.sessionId);
    };
  }

  /** The fence of the turn this process runs in the session, if it runs under a claim. */
  fenceOf(sessionId: string): TurnFence | undefined {
    return this.fences.get(sessionId);
  }

  /**
   * Appends an event: written within the tick (deltas: possibly merged into a pending one), then
   * fanned out. An event of a turn that lost its claim is dropped (the turn is stopping).
   */
  append(sessionId: string, event: SessionEvent, turnId?: string): void {
    const log = this.sessions.get(sessionId);
    if (!log) throw new Error(`event log for session ${sessionId} is not open`);
    if (this.fenceFor(sessionId, turnId, event)?.lost) return;
    if (event.type === "message.part.delta") return this.appendDelta(sessionId, log, event, turnId);
    this.emitPendingDelta(sessionId, log);
    this.enqueue(sessionId, log, event, turnId);
  }

  subscribe(sessionId: string, listener: Listener): () => void {
    const log = this.sessions.get(sessionId);
    if (!log) throw new Error(`event log for session ${sessionId} is not open`);
    log.listeners.add(listener);
    return () => log.listeners.delete(listener);
  }

  /** The last seq fanned out here. */
  lastSeq(sessionId: string): number {
    const log = this.sessions.get(sessionId);
    return log ? log.nextSeq - 1 : 0;
  }

  /** Events after `afterSeq`, in order, including any appended here and not yet written. */
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

  /** Writes everything appended so far (of one session, or all). Safe to call concurrently. */
  async flush(sessionId?: string): Promise<void> {
    const logs = [...this.sessions].filter(([id]) => sessionId === undefined || id === sessionId);
    await Promise.all(logs.map(([id, log]) => this.serial(log, () => this.write(id, log))));
  }

  /** True while someone listens to the session's events (a tab, an ACP client). */
  watched(sessionId: string): boolean {
    return (this.sessions.get(sessionId)?.listeners.size ?? 0) > 0;
  }

  /** Forgets an idle session's in-memory state (its listeners must be gone). */
  release(sessionId: string): void {
    const log = this.sessions.get(sessionId);
    if (!log || log.listeners.size > 0 || log.pendingDelta || log.unwritten.length > 0) return;
    this.sessions.delete(sessionId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.bus.close();
    for (const [sessionId, log] of this.sessions) this.emitPendingDelta(sessionId, log);
    await this.flush();
  }

  private async load(sessionId: string): Promise<SessionLog> {
    const existing = this.sessions.get(sessionId);
    if (existing) return existing;
    let pending = this.loading.get(sessionId);
    if (!pending) {
      pending = Promise.all([lastEventSeq(this.db, sessionId), lastTurnBoundary(this.db, sessionId)]).then(
        ([last, boundary]) => {
          // Nothing runs here before its log is open: a turn started and not completed runs in
          // another process (or one that died; the lease sweep completes those, server/leases).
          const log = emptyLog(last + 1, boundary?.type === "turn.started" ? turnIdOf(boundary) : null);
          this.sessions.set(sessionId, log);
          this.loading.delete(sessionId);
          return log;
        },
      );
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
      pending.event = {
        ...pending.event,
        payload: { ...pending.event.payload, delta: pending.event.payload.delta + event.payload.delta },
      };
      return;
    }
    this.emitPendingDelta(sessionId, log);
    if (!log.startedParts.has(key)) {
      // The first token goes out at once, not at the end of the tick: time to first token is what
      // users feel, and a tick can be long (a stream that arrived whole, then the turn's end).
      log.startedParts.add(key);
      log.unwritten.push(this.unwritten(sessionId, event, turnId));
      return this.startWrite(sessionId, log);
    }
    log.pendingDelta = { event, turnId, fence: this.fenceFor(sessionId, turnId, event) };
    log.deltaTimer = setTimeout(() => this.emitPendingDelta(sessionId, log), DELTA_COALESCE_MS);
  }

  private emitPendingDelta(sessionId: string, log: SessionLog): void {
    if (log.deltaTimer) clearTimeout(log.deltaTimer);
    log.deltaTimer = null;
    const pending = log.pendingDelta;
    if (!pending) return;
    log.pendingDelta = null;
    if (pending.fence?.lost) return; // its turn lost its claim: nothing more of it is written
    log.unwritten.push({ event: pending.event, turnId: pending.turnId, createdAt: new Date(), fence: pending.fence });
    this.scheduleWrite(sessionId, log);
  }

  /** Queues the event for the insert that ends this tick (events appended together are written together). */
  private enqueue(sessionId: string, log: SessionLog, event: SessionEvent, turnId?: string): void {
    if (event.type === "turn.completed") log.startedParts.clear();
    log.unwritten.push(this.unwritten(sessionId, event, turnId));
    this.scheduleWrite(sessionId, log);
  }

  private unwritten(sessionId: string, event: SessionEvent, turnId?: string): Unwritten {
    return { event, turnId, createdAt: new Date(), fence: this.fenceFor(sessionId, turnId, event) };
  }

  /**
   * The fence an event appended with `turnId` is written under: its turn's, while it runs here. An
   * `approval.decided` is not fenced: it records a decision the store already accepted (the
   * conditional update of the request), and every accepted decision is in the log.
   */
  private fenceFor(sessionId: string, turnId: string | undefined, event: SessionEvent): TurnFence | undefined {
    const fence = this.fences.get(sessionId);
    return fence && turnId === fence.turnId && event.type !== "approval.decided" ? fence : undefined;
  }

  private scheduleWrite(sessionId: string, log: SessionLog, delayMs = 0): void {
    if (log.writeScheduled) return;
    log.writeScheduled = true;
    const run = () => {
      log.writeScheduled = false;
      this.startWrite(sessionId, log);
    };
    if (delayMs > 0) setTimeout(run, delayMs).unref();
    else setImmediate(run);
  }

  /** Writes what is unwritten after the writes before it; a failed write is retried. */
  private startWrite(sessionId: string, log: SessionLog): void {
    this.serial(log, () => this.write(sessionId, log)).then(
      () => (log.retryMs = 0),
      (error: unknown) => {
        // A store outage is logged once per change of its state (server/store/durable.ts), not per retry.
        const fault = storeFault(error);
        if (fault) storeHealth.failed(fault, error);
        else reportError("persisting events", error);
        log.retryMs = Math.min(Math.max(WRITE_RETRY_MS, log.retryMs * 2), WRITE_RETRY_MAX_MS);
        if (!this.closed) this.scheduleWrite(sessionId, log, log.retryMs);
      },
    );
  }

  /** Inserts the session's unwritten events after the log's end, then fans them out. */
  private async write(sessionId: string, log: SessionLog): Promise<void> {
    while (log.unwritten.length > 0) await this.writeBatch(sessionId, log, takeBatch(log));
  }

  private async writeBatch(sessionId: string, log: SessionLog, batch: Unwritten[]): Promise<void> {
    const fence = batch.find((entry) => entry.fence)?.fence;
    const claim = fence && { sessionId, epoch: fence.epoch };
    for (let attempt = 1; ; attempt++) {
      const rows: StoredEvent[] = batch.map(({ event, turnId, createdAt }, index) => ({
        sessionId,
        seq: log.nextSeq + index,
        type: event.type,
        payload: JSON.stringify(event.payload),
        turnId: turnId ?? null,
        createdAt,
      }));
      try {
        await insertEvents(this.db, rows, claim);
      } catch (error) {
        // Another process took these seqs first: fan its events out, then take the next ones.
        if (isUniqueViolation(error) && attempt < WRITE_TRIES) {
          await this.catchUp(sessionId, log);
          continue;
        }
        if (fence && isFenced(error)) return this.refused(sessionId, log, batch, fence, error);
        // Events of a session deleted meanwhile can never be stored: dropped.
        if (!(await sessionExists(this.db, sessionId).catch(() => true))) return;
        log.unwritten = batch.concat(log.unwritten);
        throw error;
      }
      for (const row of rows) this.deliver(sessionId, log, toEnvelope(row), false);
      this.bus.published(sessionId, log.nextSeq - 1);
      return;
    }
  }

  /**
   * The store refused a turn's batch: its claim was taken over. None of the turn's events is stored
   * or fanned out, now or later; events of no turn in the batch go back to the queue. The turn is
   * told (it logs once and stops), and the log catches up with the store: the new holder's events
   * are fanned out and this process's next seq for the session is the store's.
   */
  private async refused(
    sessionId: string,
    log: SessionLog,
    batch: Unwritten[],
    fence: TurnFence,
    error: FencedError,
  ): Promise<void> {
    fence.lose(error);
    log.unwritten = batch.concat(log.unwritten).filter((entry) => entry.fence !== fence);
    await this.catchUp(sessionId, log);
  }

  /** Fans out (in order) the events other processes wrote after this log's end. */
  private async catchUp(sessionId: string, log: SessionLog): Promise<void> {
    for (;;) {
      const rows = await readEvents(this.db, sessionId, log.nextSeq - 1, CATCH_UP_PAGE);
      for (const row of rows) {
        if (row.seq !== log.nextSeq) return; // Not committed yet on another connection: the next call sees it.
        this.deliver(sessionId, log, toEnvelope(row), true);
      }
      if (rows.length < CATCH_UP_PAGE) return;
    }
  }

  private deliver(sessionId: string, log: SessionLog, envelope: EventEnvelope, foreign: boolean): void {
    log.nextSeq = envelope.seq + 1;
    if (foreign && envelope.type === "turn.started") log.foreignTurn = envelope.payload.turnId;
    if (envelope.type === "turn.completed") {
      if (foreign) log.startedParts.clear();
      if (envelope.payload.turnId === log.foreignTurn) log.foreignTurn = null;
    }
    fanOut(log, envelope);
    for (const listener of this.everyListeners) {
      try {
        listener(sessionId, envelope, foreign);
      } catch (error) {
        console.error("[worldline] event listener failed:", error);
      }
    }
    if (!foreign) return;
    for (const listener of this.foreignListeners) {
      try {
        listener(sessionId, envelope);
      } catch (error) {
        console.error("[worldline] foreign-event listener failed:", error);
      }
    }
  }

  /** Runs `task` after the session's previous write or catch-up (never two at once). */
  private serial(log: SessionLog, task: () => Promise<void>): Promise<void> {
    const run = log.chain.then(task);
    log.chain = run.catch(() => undefined); // the caller gets the failure; the next task still runs
    return run;
  }
}

const watched = ([sessionId, log]: [string, SessionLog]): [string, number] => [sessionId, log.nextSeq - 1];

function reportTail(error: unknown): void {
  reportError("reading other processes' events", error);
}
