import { WorldlineError } from "../errors";
import * as store from "../store";
import type { OwnerLease } from "./lease";

/**
 * Claims of sessions by this process (ARCHITECTURE.md, invariants): a turn runs only under a claim, which the
 * store grants to one live owner at a time, so one session never runs two turns across bridges
 * (issue 29, "one turn per session"). A refused claim names the holder: the turn router forwards
 * the prompt there.
 */
export class SessionClaims {
  constructor(
    private readonly db: store.Db,
    private readonly lease: OwnerLease,
  ) {}

  get ownerId(): string {
    return this.lease.id;
  }

  /** Claims the session for this process, or throws `session:busy` with the live holder in `details.owner`. */
  async claim(sessionId: string): Promise<store.Claim> {
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

  /** Gives the claim up once no turn of the session is running or queued here. */
  async release(claim: store.Claim): Promise<void> {
    await store.durably(() => store.releaseClaim(this.db, claim));
  }

  /** Whether the claim still holds (no sweep or takeover raised the session's epoch since). */
  async holds(claim: store.Claim): Promise<boolean> {
    const epoch = await store.sessionEpoch(this.db, claim.sessionId);
    return epoch === null || epoch === claim.epoch;
  }
}
