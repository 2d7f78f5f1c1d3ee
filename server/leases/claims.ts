import { WorldlineError } from "../errors";
import * as store from "../store";
import type { OwnerLease } from "./lease";

/**
 * Claims of sessions by this process (ARCHITECTURE.md, invariants): a turn runs only under a claim, which the
 * store grants to one live owner at a time, so one session never runs two turns across bridges
 * ("one turn per session"). A refused claim names the holder: the turn router forwards
 * the prompt there.
 */
/** Which of a session's claims by this process each claim was (SessionClaims.started). */
const claimGenerations = new WeakMap<store.Claim, number>();

export class SessionClaims {
  /**
   * Per session, how many claims this process has started: a release is for the newest claim only
   * (a prompt that re-claimed the session while the previous turn was finishing keeps it; its own
   * turn releases it), and a claim waits for a release under way, so neither undoes the other.
   */
  private readonly started = new Map<string, number>();
  private readonly releasing = new Map<string, Promise<void>>();

  constructor(
    private readonly db: store.Db,
    private readonly lease: OwnerLease,
  ) {}

  get ownerId(): string {
    return this.lease.id;
  }

  /** Claims the session for this process, or throws `session:busy` with the live holder in `details.owner`. */
  async claim(sessionId: string): Promise<store.Claim> {
    const generation = (this.started.get(sessionId) ?? 0) + 1;
    this.started.set(sessionId, generation);
    try {
      await this.releasing.get(sessionId);
      const claim = await this.take(sessionId);
      claimGenerations.set(claim, generation);
      return claim;
    } catch (error) {
      // Not taken: the claim before it is still the one to release.
      if (this.started.get(sessionId) === generation) this.started.set(sessionId, generation - 1);
      throw error;
    }
  }

  private async take(sessionId: string): Promise<store.Claim> {
    // Most claims find the session free or already ours: one statement, and the owners are read
    // (two queries, ~1 ms before the first token) only when someone else holds it.
    const free = await store.durably(() => store.claimSession(this.db, sessionId, this.lease.id, null));
    if (free.claim) return free.claim;
    const live = await this.lease.liveOwners();
    const { claim, holder } = await store.durably(() => store.claimSession(this.db, sessionId, this.lease.id, live));
    if (claim) return claim;
    throw new WorldlineError(
      "session:busy",
      "A turn of this session is running on another Worldline bridge or process; it was not started here.",
      { details: { owner: holder } },
    );
  }

  /** A claim taken with a waiting turn it took over (server/agent/take-over.ts): released like one claimed here. */
  adopted(claim: store.Claim): void {
    const generation = (this.started.get(claim.sessionId) ?? 0) + 1;
    this.started.set(claim.sessionId, generation);
    claimGenerations.set(claim, generation);
  }

  /** Gives the claim up once no turn of the session is running or queued here, unless it was claimed again since. */
  async release(claim: store.Claim): Promise<void> {
    const { sessionId } = claim;
    if (claimGenerations.get(claim) !== this.started.get(sessionId)) return;
    this.started.delete(sessionId);
    const released = store.durably(() => store.releaseClaim(this.db, claim));
    const settled = released.then(
      () => undefined,
      () => undefined, // the caller gets the error; a claim waiting on it goes ahead either way
    );
    this.releasing.set(sessionId, settled);
    void settled.then(() => this.releasing.get(sessionId) === settled && this.releasing.delete(sessionId));
    await released;
  }

  /** Whether the claim still holds (no sweep or takeover raised the session's epoch since). */
  async holds(claim: store.Claim): Promise<boolean> {
    const epoch = await store.sessionEpoch(this.db, claim.sessionId);
    return epoch === null || epoch === claim.epoch;
  }
}
