import type { SessionEvent } from "../protocol";
import * as store from "../store";
import type { OwnerLease } from "./lease";

/** What the sweep writes to a session's event log (server/sessions' EventLog). */
interface SweepLog {
  open(sessionId: string): Promise<unknown>;
  append(sessionId: string, event: SessionEvent, turnId?: string): void;
  flush(): Promise<unknown>;
}

export interface SweepDeps {
  db: store.Db;
  log: SweepLog;
  lease: OwnerLease;
  /** Marks pending requests of dead owners interrupted, except those of `keptTurns` (server/approvals). */
  interruptApprovals(live: string[], keptTurns: ReadonlySet<string>): Promise<unknown>;
  /**
   * Turns of dead owners that wait on a person and go on after a restart (server/agent/take-over.ts),
   * taken over by this process when it can run them: their ids, left waiting.
   */
  keepWaiting(live: string[]): Promise<ReadonlySet<string>>;
}

/**
 * Settles what owners that are gone left behind. A turn that waits on a person with its run
 * state stored stays waiting (taken over by a process that can run it, server/agent/take-over.ts);
 * other pending requests, then other running turns, become `interrupted`, visibly (the turn can be resumed from here, as after a restart);
 * a checkpoint such a turn announced but never stored gets a row without a snapshot.
 * Only rows of no live owner are touched, so a process starting next to a running
 * `worldline acp` leaves its turn and approval alone. Each row is settled by a conditional
 * update: of two processes sweeping at once, one appends the events.
 */
export async function sweepOrphans(deps: SweepDeps): Promise<void> {
  const { db, log } = deps;
  const live = await deps.lease.liveOwners();
  const kept = await deps.keepWaiting(live);
  // Requests are settled before their turns, so the log reads "request interrupted, then turn".
  await deps.interruptApprovals(live, kept);
  const settled: string[] = [];
  for (const turn of await store.orphanTurns(db, live)) {
    if (kept.has(turn.id)) continue;
    // Its log already ended it (the owner's status write was lost): the status follows the log,
    // with no second ending and no "the bridge stopped" notice.
    const outcome = await store.completedOutcome(db, turn.id);
    if (outcome !== null) {
      if (!(await store.settleCompletedTurn(db, turn, outcome))) continue;
      settled.push(turn.sessionId);
      await store.settleAnnouncedCheckpoints(db, turn.sessionId, turn.id);
      continue;
    }
    if (!(await store.interruptOrphanTurn(db, turn, live))) continue;
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
