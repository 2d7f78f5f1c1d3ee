import { providerOf, type Db } from "./db";

/** Rows of server/leases: each running Worldline process and what it owns (turns, approvals). */

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

const unowned = (live: string[]) => ({ OR: [{ ownerId: null }, { ownerId: { notIn: live } }] });
const RUNNING = ["running", "waiting"];

/** Running turns whose owner is not among `live` (dead, or a row older than leases). */
export async function orphanTurns(db: Db, live: string[]) {
  return db.turn.findMany({
    where: { status: { in: RUNNING }, ...unowned(live) },
    select: { id: true, sessionId: true, ownerId: true },
  });
}

/**
 * Marks one orphan turn interrupted unless another process did first (or its owner came back):
 * true if this call did. The session's claim is taken from the dead owner in the same transaction,
 * raising its epoch, so if the owner was only cut off and comes back, its writes are refused.
 */
export async function interruptOrphanTurn(db: Db, id: string, ownerId: string | null): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const turn = await tx.turn.findUnique({ where: { id }, select: { sessionId: true } });
    if (!turn) return false;
    const { count } = await tx.turn.updateMany({
      where: { id, ownerId, status: { in: RUNNING } },
      data: { status: "interrupted", endedAt: new Date() },
    });
    if (count !== 1) return false;
    await tx.$executeRaw`
      UPDATE "Session" SET "epoch" = "epoch" + 1, "claimOwnerId" = NULL
      WHERE "id" = ${turn.sessionId} AND ("claimOwnerId" IS NULL OR "claimOwnerId" = ${ownerId})`;
    return true;
  });
}

/** Pending requests whose owner is not among `live`. */
export async function orphanApprovals(db: Db, live: string[]) {
  return db.approval.findMany({
    where: { status: "pending", ...unowned(live) },
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

/** The owner of the session's running turn, if one runs (the newest, should a dead one linger). */
export async function runningTurnOwner(db: Db, sessionId: string): Promise<string | null> {
  const turn = await db.turn.findFirst({
    where: { sessionId, status: { in: RUNNING } },
    orderBy: { startedAt: "desc" },
    select: { ownerId: true },
  });
  return turn?.ownerId ?? null;
}
