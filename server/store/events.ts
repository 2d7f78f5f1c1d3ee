import { FencedError, heldAt } from "./claims";
import { providerOf, type Db } from "./db";
import { Prisma } from "./generated/prisma/client";

export interface StoredEvent {
  sessionId: string;
  seq: number;
  type: string;
  payload: string;
  turnId: string | null;
  createdAt: Date;
}

/** Rows per INSERT statement: 6 bound values each, far below SQLite's limit on variables. */
const INSERT_ROWS_PER_STATEMENT = 500;

/**
 * Appends a batch atomically (one statement, or one transaction past INSERT_ROWS_PER_STATEMENT
 * rows); (sessionId, seq) is unique, so a duplicate fails loudly and nothing of the batch is
 * written.
 *
 * With `claim` (a turn's events, written on its owner's behalf) the batch is stored only while the
 * session is at the claim's epoch (`heldAt`): otherwise nothing of it is, and `session:fenced` is
 * thrown. The rows then come from a VALUES list inside an INSERT … SELECT, whose columns
 * PostgreSQL types from the values, not from the table: seq and createdAt are cast there.
 */
export async function insertEvents(
  db: Db,
  events: StoredEvent[],
  claim?: { sessionId: string; epoch: number },
): Promise<void> {
  if (events.length === 0) return;
  const typed = providerOf(db) === "postgresql";
  const statements: Prisma.PrismaPromise<number>[] = [];
  for (let start = 0; start < events.length; start += INSERT_ROWS_PER_STATEMENT) {
    const batch = events.slice(start, start + INSERT_ROWS_PER_STATEMENT);
    const rows = batch.map((event) =>
      typed
        ? Prisma.sql`(${event.sessionId}, CAST(${event.seq} AS INTEGER), ${event.type}, ${event.payload}, ${event.turnId}, CAST(${event.createdAt} AS TIMESTAMP(3)))`
        : Prisma.sql`(${event.sessionId}, ${event.seq}, ${event.type}, ${event.payload}, ${event.turnId}, ${event.createdAt})`,
    );
    // Raw: Prisma cannot make an insert conditional on another row (the epoch). One statement rather
    // than a fenced() transaction, on every turn's way to its first token (heldAt's figure, claims.ts).
    // Unfenced batches take the same statement: Prisma's createMany compiles a new plan for every
    // batch (its values are in the request), ~0.6 ms against ~0.1 ms for this one.
    const fence = claim ? Prisma.sql` WHERE ${heldAt(db, claim)}` : Prisma.empty;
    statements.push(db.$executeRaw`INSERT INTO "Event" ("sessionId", "seq", "type", "payload", "turnId", "createdAt")
      SELECT * FROM (VALUES ${Prisma.join(rows)}) AS "rows"${fence}`);
  }
  // In one transaction the first statement's check holds for the rest (PostgreSQL keeps its lock to
  // the commit; SQLite has one writer), so a fenced batch is stored whole or not at all.
  const results = statements.length === 1 ? [await statements[0]] : await db.$transaction(statements);
  const stored = results.reduce((sum, count) => sum + count, 0);
  if (claim && stored === 0) throw new FencedError(claim.sessionId, claim.epoch);
}

/**
 * Events after `afterSeq`, in order. Raw, with exactly findMany's rows (a test compares them): the
 * log's catch-up with other processes reads it at every prompt, before the first token, and
 * findMany's plan (the seq is in its request) was compiled anew each time, ~0.9 ms against ~0.2.
 */
export async function readEvents(
  db: Db,
  sessionId: string,
  afterSeq: number,
  limit?: number,
): Promise<Prisma.EventModel[]> {
  const limited = limit === undefined ? Prisma.empty : Prisma.sql` LIMIT ${limit}`;
  return db.$queryRaw<Prisma.EventModel[]>`
    SELECT * FROM "Event" WHERE "sessionId" = ${sessionId} AND "seq" > ${afterSeq} ORDER BY "seq" ASC${limited}`;
}

export async function lastEventSeq(db: Db, sessionId: string): Promise<number> {
  const last = await db.event.findFirst({ where: { sessionId }, orderBy: { seq: "desc" }, select: { seq: true } });
  return last?.seq ?? 0;
}

export async function readTurnEvents(db: Db, turnId: string) {
  return db.event.findMany({ where: { turnId }, orderBy: { seq: "asc" } });
}

/** The last seq of each of these sessions (sessions without events are absent): one indexed query. */
export async function lastEventSeqs(db: Db, sessionIds: string[]): Promise<Map<string, number>> {
  if (sessionIds.length === 0) return new Map();
  const rows = await db.event.groupBy({
    by: ["sessionId"],
    where: { sessionId: { in: sessionIds } },
    _max: { seq: true },
  });
  return new Map(rows.map((row) => [row.sessionId, row._max.seq ?? 0]));
}

/** The session's last `turn.started` or `turn.completed` event (which turn, if any, is still running). */
export async function lastTurnBoundary(db: Db, sessionId: string) {
  return db.event.findFirst({
    where: { sessionId, type: { in: ["turn.started", "turn.completed"] } },
    orderBy: { seq: "desc" },
    select: { type: true, turnId: true, payload: true },
  });
}
