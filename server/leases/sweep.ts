import type { EventLog } from "../sessions";
import * as store from "../store";
import type { OwnerLease } from "./lease";

export interface SweepDeps {
  db: store.Db;
  log: EventLog;
  lease: OwnerLease;
  /** Marks pending requests of dead owners interrupted (server/approvals). */
  interruptApprovals(live: string[]): Promise<unknown>;
}

/**
 * Settles what owners that are gone left behind: their pending requests, then their running
 * turns, become `interrupted`, visibly (the turn can be resumed from here, as after a restart);
 * a checkpoint such a turn announced but never stored gets a row without a snapshot.
 * Only rows of no live owner are touched, so a process starting next to a running
 * `worldline acp` leaves its turn and approval alone. Each row is settled by a conditional
 * update: of two processes sweeping at once, one appends the events.
 */
export async function sweepOrphans(deps: SweepDeps): Promise<void> {
  const { db, log } = deps;
  const live = await deps.lease.liveOwners();
  // Requests are settled before their turns, so the log reads "request interrupted, then turn".
  await deps.interruptApprovals(live);
  const settled: string[] = [];
  for (const turn of await store.orphanTurns(db, live)) {
    // Its log already ended it (the owner's status write was lost): the status follows the log,
    // with no second ending and no "the bridge stopped" notice.
    const outcome = await store.completedOutcome(db, turn.id);
    if (outcome !== null) {
      if (!(await store.settleCompletedTurn(db, turn.id, turn.ownerId, outcome))) continue;
      settled.push(turn.sessionId);
      await store.settleAnnouncedCheckpoints(db, turn.sessionId, turn.id);
      continue;
    }
    if (!(await store.interruptOrphanTurn(db, turn.id, turn.ownerId))) continue;
    settled.push(turn.sessionId);
    // Checkpoints it announced but died (or was fenced) before storing get a row without a snapshot.
    await store.settleAnnouncedCheckpoints(db, turn.sessionId, turn.id);
    await log.open(turn.sessionId);
    log.append(turn.sessionId, {
      type: "notice",
      payload: {
        level: "warning",
        text: "The bridge stopped while this turn was running; it was interrupted.",
        turnId: turn.id,
      },
    });
    log.append(
      turn.sessionId,
      { type: "turn.completed", payload: { turnId: turn.id, outcome: "interrupted" } },
      turn.id,
    );
  }
  if (settled.length === 0) return;
  await store.settleIdleSessions(db, settled);
  await log.flush();
}
