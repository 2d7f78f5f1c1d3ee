import { WorldlineError } from "../errors";
import { providerOf, type Db } from "./db";
import { Prisma } from "./generated/prisma/client";

/**
 * Fencing (ARCHITECTURE.md, invariants). A bridge claims a session before it runs the session's turns; a claim
 * taken from another holder raises the session's epoch, and every write on a claim's behalf is
 * conditional on the epoch it was taken at. A bridge that lost its claim (swept while it could not
 * reach the database, or a peer took over) gets `session:fenced` from its next write and stops.
 */

/** A write refused because the session was claimed by someone else since (the writer is stale). */
export class FencedError extends WorldlineError {
  constructor(sessionId: string, epoch: number) {
    super(
      "session:fenced",
      `This bridge no longer holds session ${sessionId} (its claim at epoch ${epoch} was taken over); its turn stops here.`,
    );
  }
}

export function isFenced(error: unknown): error is FencedError {
  return error instanceof FencedError;
}

export interface Claim {
  sessionId: string;
  ownerId: string;
  epoch: number;
}

/**
 * Claims the session for `ownerId` unless a live other owner holds it: the epoch stays when the
 * holder claims again, and rises when the claim passes to a new holder. One statement, so of two
 * bridges claiming at the same instant exactly one wins (the row is the arbiter); raw because
 * Prisma's update cannot set the epoch from the row's own holder (the CASE). Null when a live
 * other owner holds it; `holder` then says who. With `live` null the claim is taken only when it
 * is free or already ours (no other holder is judged dead).
 */
export async function claimSession(
  db: Db,
  sessionId: string,
  ownerId: string,
  live: string[] | null,
): Promise<{ claim: Claim | null; holder: string | null }> {
  const others = live?.filter((id) => id !== ownerId) ?? [];
  const notLive =
    live === null
      ? Prisma.sql`1 = 0`
      : others.length
        ? Prisma.sql`"claimOwnerId" NOT IN (${Prisma.join(others)})`
        : Prisma.sql`1 = 1`;
  const rows = await db.$queryRaw<{ epoch: number }[]>`
    UPDATE "Session"
    SET "epoch" = CASE WHEN "claimOwnerId" = ${ownerId} THEN "epoch" ELSE "epoch" + 1 END, "claimOwnerId" = ${ownerId}
    WHERE "id" = ${sessionId} AND ("claimOwnerId" IS NULL OR "claimOwnerId" = ${ownerId} OR ${notLive})
    RETURNING "epoch"`;
  if (rows.length === 1) return { claim: { sessionId, ownerId, epoch: Number(rows[0].epoch) }, holder: null };
  const row = await db.session.findUnique({ where: { id: sessionId }, select: { claimOwnerId: true } });
  return { claim: null, holder: row?.claimOwnerId ?? null };
}

/** Gives the claim up (no turn left to run): the next claim by anyone starts from this epoch. */
export async function releaseClaim(db: Db, claim: Claim): Promise<void> {
  await db.session.updateMany({
    where: { id: claim.sessionId, claimOwnerId: claim.ownerId, epoch: claim.epoch },
    data: { claimOwnerId: null },
  });
}

/** The session's epoch now (null: the session is gone). */
export async function sessionEpoch(db: Db, sessionId: string): Promise<number | null> {
  const row = await db.session.findUnique({ where: { id: sessionId }, select: { epoch: true } });
  return row?.epoch ?? null;
}

/**
 * The condition of a single-statement fenced write: true while the session is at the claim's
 * epoch. SQLite runs a statement alone (one writer at a time), so the check and the write are one
 * step. On PostgreSQL the subquery share-locks the session's row until the statement commits: a
 * takeover (an UPDATE of that row) waits for the write, or the write waits for the takeover and
 * then sees the new epoch, so a stale write can never land after a takeover (a plain EXISTS reads
 * the statement's snapshot, which a takeover committing meanwhile does not change). One
 * statement, not a `fenced()` transaction, because events are appended on the way to the first
 * token: a one-event append took (best of 5 × 200 on 2 shared, busy cores; the timing test in
 * tests/unit/store/fenced-writes.test.ts) 0.93 ms plain, 1.03 ms with this condition and 3.98 ms
 * in a fenced() transaction on SQLite; 6.24, 6.48 and 10.13 ms on PostgreSQL.
 */
export function heldAt(db: Db, claim: { sessionId: string; epoch: number }): Prisma.Sql {
  const lock = providerOf(db) === "postgresql" ? Prisma.sql`FOR SHARE` : Prisma.empty;
  return Prisma.sql`EXISTS (SELECT 1 FROM "Session" WHERE "id" = ${claim.sessionId} AND "epoch" = ${claim.epoch} ${lock})`;
}

/**
 * Runs `write` in a transaction that first checks (and, on PostgreSQL, locks) the session's row at
 * the claim's epoch: a takeover waits for the write or makes it fail with `session:fenced`.
 */
export async function fenced<T>(
  db: Db,
  claim: { sessionId: string; epoch: number },
  write: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  return db.$transaction(async (tx) => {
    // An UPDATE, not a read: it locks the row to the commit on PostgreSQL, and takes SQLite's write
    // lock. Raw: Prisma's updateMany also moves `updatedAt` (the session's last activity) at every
    // fenced write, and with the two below it cost each agent step ~0.9 ms (bench/README.md, "Raw SQL").
    const held = await tx.$executeRaw`
      UPDATE "Session" SET "epoch" = "epoch" WHERE "id" = ${claim.sessionId} AND "epoch" = ${claim.epoch}`;
    if (held !== 1) throw new FencedError(claim.sessionId, claim.epoch);
    return write(tx);
  });
}

/**
 * The session's next checkpoint number (with `count`, the first of that many in a row), taken by
 * the store (one atomic increment), so any bridge can take the next one and two never take the
 * same.
 */
export async function takeCheckpointNumber(db: Db, sessionId: string, count = 1): Promise<number> {
  // Raw, for the same two reasons as `fenced`: taken at every step's checkpoint.
  const rows = await db.$queryRaw<{ nextCheckpoint: number }[]>`
    UPDATE "Session" SET "nextCheckpoint" = "nextCheckpoint" + CAST(${count} AS INTEGER) WHERE "id" = ${sessionId} RETURNING "nextCheckpoint"`;
  if (rows.length === 0) throw new WorldlineError("session:not_found", `No session ${sessionId}.`);
  return Number(rows[0].nextCheckpoint) - count;
}
