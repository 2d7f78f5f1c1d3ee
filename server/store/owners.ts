import type { Db } from "./db";

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

/** Marks one orphan turn interrupted unless another process did first (or its owner came back): true if this call did. */
export async function interruptOrphanTurn(db: Db, id: string, ownerId: string | null): Promise<boolean> {
  const { count } = await db.turn.updateMany({
    where: { id, ownerId, status: { in: RUNNING } },
    data: { status: "interrupted", endedAt: new Date() },
  });
  return count === 1;
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
