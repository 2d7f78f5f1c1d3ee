import { fenced, type Claim } from "./claims";
import type { Db } from "./db";
import { isOrphan } from "./owners";

/**
 * Turns that wait on a person across a restart (server/agent/run-state.ts): the loop's state at
 * the wait is kept on the turn's row, and a live bridge takes such a turn over from an owner
 * that is gone instead of interrupting it.
 */

const WAITING = ["running", "waiting"];

/** Writes (or clears, with null) the turn's run state, fenced on its claim. */
export async function saveRunState(db: Db, turnId: string, runState: string | null, claim?: Claim): Promise<void> {
  const write = (client: Pick<Db, "turn">) =>
    client.turn.updateMany({ where: { id: turnId, status: { in: WAITING } }, data: { runState } });
  if (claim) await fenced(db, claim, (tx) => write(tx));
  else await write(db);
}

export interface WaitingTurn {
  id: string;
  sessionId: string;
  number: number;
  prompt: string;
  /** The session's epoch its claim was taken at for this turn (it is the claim holder's while that holds). */
  epoch: number;
  runState: string;
  /** Ids of the turn's requests still pending. */
  pending: string[];
}

/** Unfinished turns with a run state of no live claim (server/store/owners.ts), with their pending requests. */
export async function orphanWaitingTurns(db: Db, live: string[]): Promise<WaitingTurn[]> {
  const found = await db.turn.findMany({
    where: { status: { in: WAITING }, runState: { not: null } },
    select: {
      ...{ id: true, sessionId: true, number: true, prompt: true, epoch: true, runState: true },
      session: { select: { epoch: true, claimOwnerId: true } },
    },
  });
  const turns = found
    .filter((turn) => isOrphan(turn, live))
    .map(({ id, sessionId, number, prompt, epoch, runState }) => ({ id, sessionId, number, prompt, epoch, runState }));
  if (turns.length === 0) return [];
  const approvals = await db.approval.findMany({
    where: { turnId: { in: turns.map((turn) => turn.id) }, status: "pending" },
    select: { id: true, turnId: true },
  });
  return turns.map((turn) => ({
    ...turn,
    runState: turn.runState!,
    pending: approvals.filter((approval) => approval.turnId === turn.id).map((approval) => approval.id),
  }));
}

/**
 * Takes a waiting turn over from its owner that is gone, in one transaction: the session's claim
 * passes to `ownerId` (its epoch rises, so the old owner's writes are refused should it come back),
 * the turn moves to the new epoch, and its pending requests pass along. Null when another process
 * took it first, or the session is claimed by a live owner.
 */
export async function adoptWaitingTurn(
  db: Db,
  turn: Pick<WaitingTurn, "id" | "sessionId" | "epoch">,
  ownerId: string,
  live: string[],
): Promise<Claim | null> {
  const others = live.filter((id) => id !== ownerId);
  return db
    .$transaction(async (tx) => {
      const claimed = await tx.session.updateMany({
        where: { id: turn.sessionId, OR: [{ claimOwnerId: null }, { claimOwnerId: { notIn: others } }] },
        data: { epoch: { increment: 1 }, claimOwnerId: ownerId },
      });
      if (claimed.count !== 1) throw new NotAdopted();
      const session = await tx.session.findUniqueOrThrow({ where: { id: turn.sessionId }, select: { epoch: true } });
      const moved = await tx.turn.updateMany({
        where: { id: turn.id, epoch: turn.epoch, status: { in: WAITING }, runState: { not: null } },
        data: { epoch: session.epoch },
      });
      if (moved.count !== 1) throw new NotAdopted();
      await tx.approval.updateMany({ where: { turnId: turn.id, status: "pending" }, data: { ownerId } });
      return { sessionId: turn.sessionId, ownerId, epoch: session.epoch };
    })
    .catch((error: unknown) => {
      if (error instanceof NotAdopted) return null;
      throw error;
    });
}

/** Rolls the adoption back: someone else got there first. */
class NotAdopted extends Error {}
