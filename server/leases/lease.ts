import os from "node:os";
import { randomUUID } from "node:crypto";
import { pidExists } from "../processes";
import * as store from "../store";

/**
 * An owner silent this long is dead and what it owned is swept: three heartbeats missed,
 * so an owner stalled by a long synchronous step or a busy database lock is not declared
 * dead, while a killed one is noticed well within the 30 s a user waits for a takeover.
 */
const LEASE_TTL_MS = 10_000;
/** How often an owner renews its lease (and sweeps other owners' leftovers): a third of the TTL. */
const HEARTBEAT_MS = 3_000;
/** Owner rows silent this long are deleted; they are kept a while for the record of who ran what. */
const FORGET_OWNERS_AFTER_MS = 24 * 60 * 60_000;

/**
 * What this process can tell of another owner now: alive (a fresh heartbeat), gone (a stale one
 * while heartbeats can be judged, or no process with its pid on this host), or unknown: back from
 * an outage, heartbeats from before it prove nothing, so a silent owner is neither (for
 * `retryAfterMs`, until judging resumes).
 */
export type Liveness = { state: "live" } | { state: "gone" } | { state: "unknown"; retryAfterMs: number };

export interface LeaseOptions {
  /** web | acp | run: what kind of process this is, for the record. */
  kind: string;
  /** Tests shorten these (internal, not a public setting). */
  ttlMs?: number;
  heartbeatMs?: number;
}

/**
 * This process's lease: one row in the Owner table with a heartbeat. Every turn and approval
 * this process runs carries `lease.id`; another process treats them as alive while the row's
 * heartbeat is younger than the TTL, and sweeps them (interrupted) after.
 */
export class OwnerLease {
  readonly id = `o-${randomUUID()}`;
  readonly ttlMs: number;
  private readonly heartbeatMs: number;
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;
  private readonly afterBeat: (() => Promise<void>)[] = [];
  /**
   * After this process could not beat (the database was unreachable), the database time until
   * which it judges no one dead: every owner gets a TTL to write a heartbeat after the outage,
   * since heartbeats from before it say nothing. Null when in good standing.
   */
  private trustAfter: Date | null = null;
  private beatFailed = false;
  /** The after-beat tasks (by index) whose last run failed: logged once until they succeed again. */
  private readonly failingTasks = new Set<number>();

  constructor(
    private readonly db: store.Db,
    private readonly options: LeaseOptions,
  ) {
    this.ttlMs = options.ttlMs ?? envMs("WORLDLINE_LEASE_TTL_MS") ?? LEASE_TTL_MS;
    this.heartbeatMs = options.heartbeatMs ?? envMs("WORLDLINE_HEARTBEAT_MS") ?? HEARTBEAT_MS;
  }

  /** Writes the first heartbeat (so this process counts as live before it sweeps) and starts beating. */
  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.tick(), this.heartbeatMs);
    this.timer.unref();
  }

  /** Runs after every heartbeat (the sweep of dead owners' leftovers). */
  onBeat(task: () => Promise<void>): void {
    this.afterBeat.push(task);
  }

  /**
   * Ids of owners alive now (this one included): a fresh heartbeat, and on this host a process
   * that still exists, so a bridge restarted right after a kill -9 settles its predecessor's
   * turns at once instead of a TTL later.
   */
  async liveOwners(): Promise<string[]> {
    const now = await store.databaseNow(this.db);
    const fresh = this.judging(now)
      ? await store.freshOwners(this.db, new Date(now.getTime() - this.ttlMs))
      : await store.allOwners(this.db);
    const host = os.hostname();
    const live = fresh.filter((owner) => owner.host !== host || isRunning(owner.pid)).map((owner) => owner.id);
    return live.includes(this.id) ? live : [...live, this.id];
  }

  async isLive(ownerId: string | null): Promise<boolean> {
    return ownerId !== null && (await this.liveOwners()).includes(ownerId);
  }

  /**
   * One owner's liveness, strictly (a decision for it is accepted only when `live`): unlike
   * `liveOwners`, which counts every owner live while it cannot judge (so nothing is swept), a
   * silent owner is `unknown` then, not alive.
   */
  async liveness(ownerId: string): Promise<Liveness> {
    if (ownerId === this.id) return { state: "live" };
    const now = await store.databaseNow(this.db);
    const owner = await store.ownerHeartbeat(this.db, ownerId);
    if (!owner || (owner.host === os.hostname() && !isRunning(owner.pid))) return { state: "gone" };
    if (now.getTime() - owner.heartbeatAt.getTime() <= this.ttlMs) return { state: "live" };
    if (this.judging(now)) return { state: "gone" };
    const judgingAt = this.trustAfter?.getTime() ?? now.getTime() + this.ttlMs; // not beating yet: at least a TTL
    return { state: "unknown", retryAfterMs: Math.max(judgingAt - now.getTime(), 0) };
  }

  /** A clean stop: the row goes at once (what this process owned was settled by its shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await store.removeOwner(this.db, this.id).catch(() => undefined); // the row expires by its heartbeat anyway
  }

  /**
   * Whether heartbeats can be judged now: not while this process is back from an outage for less
   * than a TTL (then every owner row counts as live, and nothing is swept).
   */
  private judging(now: Date): boolean {
    if (this.beatFailed) return false;
    if (this.trustAfter && now < this.trustAfter) return false;
    this.trustAfter = null;
    return true;
  }

  private async tick(): Promise<void> {
    if (this.beating) return;
    this.beating = (async () => {
      try {
        if (await this.tryBeat()) await this.runAfterBeat();
      } finally {
        this.beating = null;
      }
    })();
    await this.beating;
  }

  /**
   * One heartbeat; false when it could not be written. Only the heartbeat's own write counts here:
   * a task after it failing (the sweep) must not reset the "judge no one dead yet" window.
   */
  private async tryBeat(): Promise<boolean> {
    try {
      await this.beat();
      store.storeHealth.succeeded(); // the heartbeat is the store's health probe (/api/v1/health)
      return true;
    } catch (error) {
      const fault = store.storeFault(error);
      if (fault) store.storeHealth.failed(fault, error);
      // The next beat retries; the TTL allows for a few misses. Logged once per outage, not per beat.
      if (!this.beatFailed) {
        console.error("[worldline] lease heartbeat failed:", error instanceof Error ? error.message : error);
      }
      this.beatFailed = true;
      return false;
    }
  }

  /** Every task after a heartbeat runs, whichever failed before it; each failure is logged once until it succeeds again. */
  private async runAfterBeat(): Promise<void> {
    for (const [index, task] of this.afterBeat.entries()) {
      try {
        await task();
        this.failingTasks.delete(index);
      } catch (error) {
        const fault = store.storeFault(error);
        if (fault) store.storeHealth.failed(fault, error);
        if (this.failingTasks.has(index)) continue;
        this.failingTasks.add(index);
        console.error(
          "[worldline] a task after the lease heartbeat failed; it runs again after the next one:",
          error instanceof Error ? error.message : error,
        );
      }
    }
  }

  private async beat(): Promise<void> {
    const now = await store.databaseNow(this.db);
    await store.beatOwner(
      this.db,
      { id: this.id, kind: this.options.kind, host: os.hostname(), pid: process.pid },
      now,
    );
    if (this.beatFailed) {
      this.beatFailed = false;
      this.trustAfter = new Date(now.getTime() + this.ttlMs);
      console.error(
        `[worldline] lease heartbeat written again; no other bridge is judged dead for ${this.ttlMs} ms (they may still be reconnecting)`,
      );
    }
    if (Math.random() < this.heartbeatMs / 3_600_000) {
      // About once an hour per process: old rows of dead owners go (the heartbeat is written; a miss waits an hour).
      await store.pruneOwners(this.db, new Date(now.getTime() - FORGET_OWNERS_AFTER_MS)).catch(() => undefined);
    }
  }
}

/** Whether an owner's process on this host still exists (the liveness check of server/processes). */
function isRunning(pid: number): boolean {
  return pid === process.pid || pidExists(pid);
}

function envMs(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}
