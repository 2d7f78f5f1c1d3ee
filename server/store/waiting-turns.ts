import { fenced, type Claim } from "./claims";
import type { Db } from "./db";

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
  ownerId: string | null;
  runState: string;
  /** Ids of the turn's requests still pending. */
  pending: string[];
}

/** Unfinished turns with a run state whose owner is not among `live`, with their pending requests. */
export async function orphanWaitingTurns(db: Db, live: string[]): Promise<WaitingTurn[]> {
  const turns = await db.turn.findMany({
    where: {
      status: { in: WAITING },
      runState: { not: null },
      OR: [{ ownerId: null }, { ownerId: { notIn: live } }],
    },
    select: { id: true, sessionId: true, number: true, prompt: true, ownerId: true, runState: true },
  });
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
 * Takes a waiting turn over from its owner that is gone, in one transaction: the turn and its
 * pending requests pass to `ownerId`, and so does the session's claim (its epoch rises, so the old
 * owner's writes are refused should it come back). Null when another process took it first, or
 * the session is claimed by a live owner.
 */
export async function adoptWaitingTurn(
  db: Db,
  turn: Pick<WaitingTurn, "id" | "sessionId" | "ownerId">,
  ownerId: string,
  live: string[],
): Promise<Claim | null> {
  const others = live.filter((id) => id !== ownerId);
  return db
    .$transaction(async (tx) => {
      const moved = await tx.turn.updateMany({
        where: { id: turn.id, ownerId: turn.ownerId, status: { in: WAITING }, runState: { not: null } },
        data: { ownerId },
      });
      if (moved.count !== 1) throw new NotAdopted();
      const claimed = await tx.session.updateMany({
        where: {
          id: turn.sessionId,
          OR: [{ claimOwnerId: null }, { claimOwnerId: turn.ownerId }, { claimOwnerId: { notIn: others } }],
        },
        data: { epoch: { increment: 1 }, claimOwnerId: ownerId },
      });
      if (claimed.count !== 1) throw new NotAdopted();
      const session = await tx.session.findUniqueOrThrow({ where: { id: turn.sessionId }, select: { epoch: true } });
      await tx.turn.update({ where: { id: turn.id }, data: { epoch: session.epoch } });
      await tx.approval.updateMany({
        where: { turnId: turn.id, status: "pending", ownerId: turn.ownerId },
        data: { ownerId },
      });
      return { sessionId: turn.sessionId, ownerId, epoch: session.epoch };
    })
    .catch((error: unknown) => {
      if (error instanceof NotAdopted) return null;
      throw error;
    });
}

/** Rolls the adoption back: someone else got there first. */
class NotAdopted extends Error {}
