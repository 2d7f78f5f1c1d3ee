import { providerOf, type Db } from "./db";

/** Rows of server/leases: each running Worldline process, and what it leaves behind when it dies (turns, approvals). */

export interface OwnerRecord {
  id: string;
  kind: string;
  host: string;
  pid: number;
}

/** Writes (or refreshes) the owner's heartbeat. */
export async function beatOwner(db: Db, owner: OwnerRecord, at: Date): Promise<void> {
  await db.owner.upsert({
    where: { id: owner.id },
    create: { ...owner, heartbeatAt: at },
    update: { heartbeatAt: at },
  });
}

export async function removeOwner(db: Db, id: string): Promise<void> {
  await db.owner.deleteMany({ where: { id } });
}

/**
 * The database's clock: heartbeats are written and judged by it, so bridges whose clocks differ
 * agree on who is alive. SQLite is one file on one host: its clock is this process's.
 */
export async function databaseNow(db: Db): Promise<Date> {
  if (providerOf(db) !== "postgresql") return new Date();
  // Raw: Prisma has no way to read the database server's clock.
  const [row] = await db.$queryRaw<{ now: Date }[]>`SELECT now() AS "now"`;
  return new Date(row.now);
}

/** Every owner row, whatever its heartbeat (a bridge just back from an outage counts them all live). */
export async function allOwners(db: Db): Promise<OwnerRecord[]> {
  return db.owner.findMany({ select: { id: true, kind: true, host: true, pid: true } });
}

/** One owner's row with its last heartbeat (null: never seen, or forgotten). */
export async function ownerHeartbeat(db: Db, id: string): Promise<(OwnerRecord & { heartbeatAt: Date }) | null> {
  return db.owner.findUnique({
    where: { id },
    select: { id: true, kind: true, host: true, pid: true, heartbeatAt: true },
  });
}

/** Owners whose heartbeat is no older than `since`. */
export async function freshOwners(db: Db, since: Date): Promise<OwnerRecord[]> {
  return db.owner.findMany({
    where: { heartbeatAt: { gte: since } },
    select: { id: true, kind: true, host: true, pid: true },
  });
}

/** Forgets owners silent since `before` (what they owned was swept long ago). */
export async function pruneOwners(db: Db, before: Date): Promise<void> {
  await db.owner.deleteMany({ where: { heartbeatAt: { lt: before } } });
}

const RUNNING = ["running", "waiting"];

/**
 * A turn belongs to its session's claim holder while the session is still at the turn's epoch
 * (server/leases/README.md). It is an orphan when the claim is free, its holder is not among
 * `live`, or the claim has moved on since the turn was claimed (its owner was fenced).
 */
export function isOrphan(
  turn: { epoch: number; session: { epoch: number; claimOwnerId: string | null } },
  live: string[],
) {
  const { claimOwnerId, epoch } = turn.session;
  return claimOwnerId === null || !live.includes(claimOwnerId) || turn.epoch !== epoch;
}

/** Running turns of no live claim (their holder is dead, the claim moved on, or a row older than claims). */
export async function orphanTurns(db: Db, live: string[]): Promise<{ id: string; sessionId: string; epoch: number }[]> {
  const turns = await db.turn.findMany({
    where: { status: { in: RUNNING } },
    select: { id: true, sessionId: true, epoch: true, session: { select: { epoch: true, claimOwnerId: true } } },
  });
  return turns.filter((turn) => isOrphan(turn, live)).map(({ id, sessionId, epoch }) => ({ id, sessionId, epoch }));
}

/**
 * Marks one orphan turn interrupted unless another process did first (or took it over): true if
 * this call did. If the session's claim is still the one the turn ran under and no live owner
 * holds it, it is taken from the dead holder in the same transaction, raising the epoch, so if the
 * owner was only cut off and comes back, its writes are refused. A turn whose claim moved on
 * already (the session is past its epoch) is interrupted alone; a live holder at the turn's epoch
 * keeps it.
 */
export async function interruptOrphanTurn(
  db: Db,
  turn: { id: string; sessionId: string; epoch: number },
  live: string[],
): Promise<boolean> {
  return db.$transaction(async (tx) => {
    await tx.session.updateMany({
      where: {
        id: turn.sessionId,
        epoch: turn.epoch,
        OR: [{ claimOwnerId: null }, { claimOwnerId: { notIn: live } }],
      },
      data: { epoch: { increment: 1 }, claimOwnerId: null },
    });
    const session = await tx.session.findUnique({ where: { id: turn.sessionId }, select: { epoch: true } });
    // The epoch only rises: past the turn's, no write of its owner can land any more.
    if (!session || session.epoch === turn.epoch) return false;
    const { count } = await tx.turn.updateMany({
      where: { id: turn.id, epoch: turn.epoch, status: { in: RUNNING } },
      data: { status: "interrupted", endedAt: new Date() },
    });
    return count === 1;
  });
}

/** Pending requests whose owner is not among `live`. */
export async function orphanApprovals(db: Db, live: string[]) {
  return db.approval.findMany({
    where: { status: "pending", OR: [{ ownerId: null }, { ownerId: { notIn: live } }] },
    select: { id: true, sessionId: true, turnId: true, toolCallId: true, ownerId: true },
  });
}

/** Marks one orphan request interrupted unless it was decided first: true if this call did. */
export async function interruptOrphanApproval(
  db: Db,
  id: string,
  ownerId: string | null,
  decidedBy: string,
): Promise<boolean> {
  const { count } = await db.approval.updateMany({
    where: { id, ownerId, status: "pending" },
    data: { status: "interrupted", decidedBy, decidedAt: new Date() },
  });
  return count === 1;
}

/** Sessions still marked running with no running turn left (their turns were interrupted). */
export async function settleIdleSessions(db: Db, sessionIds: string[]): Promise<void> {
  for (const id of new Set(sessionIds)) {
    const running = await db.turn.count({ where: { sessionId: id, status: { in: RUNNING } } });
    if (running === 0) await db.session.updateMany({ where: { id, status: "running" }, data: { status: "idle" } });
  }
}

/** The holder of the session's claim while a turn of it runs (null: no turn runs, or the claim is free). */
export async function runningTurnOwner(db: Db, sessionId: string): Promise<string | null> {
  const session = await db.session.findFirst({
    where: { id: sessionId, turns: { some: { status: { in: RUNNING } } } },
    select: { claimOwnerId: true },
  });
  return session?.claimOwnerId ?? null;
}
