import type { Db } from "./db";
import { fenced } from "./claims";
import { Prisma } from "./generated/prisma/client";

export interface HistoryRow {
  position: number;
  kind: string;
  data: string;
}

/** A history write that does not continue the stored history: another writer appended or truncated meanwhile. */
export class HistoryGapError extends Error {
  constructor(sessionId: string, expected: number, found: number) {
    super(
      `History of session ${sessionId} ends at position ${found - 1}, not ${expected - 1}: it changed under this writer.`,
    );
    this.name = "HistoryGapError";
  }
}

/**
 * Appends entries to the model-facing conversation (positions from 0, gap-free). The batch must
 * continue the stored history exactly: its first position is the stored count, so positions are
 * taken by the store's state and never jump. A retry of a batch that went
 * through (its answer was lost) finds it already stored and succeeds. With `claim`, the write is
 * fenced on the session's epoch.
 */
export async function appendHistory(
  db: Db,
  sessionId: string,
  entries: HistoryRow[],
  claim?: { epoch: number },
): Promise<void> {
  if (entries.length === 0) return;
  const write = async (tx: Prisma.TransactionClient) => {
    // Raw: read at every step's history write (bench/README.md, "Raw SQL").
    const [{ next }] = await tx.$queryRaw<{ next: number }[]>`
      SELECT COALESCE(MAX("position") + 1, 0) AS "next" FROM "HistoryEntry" WHERE "sessionId" = ${sessionId}`;
    const stored = Number(next);
    const first = entries[0].position;
    const last = entries[entries.length - 1].position;
    if (stored === last + 1 && (await storedAlready(tx, sessionId, entries))) return; // a retried write that went through
    if (stored !== first) throw new HistoryGapError(sessionId, first, stored);
    const createdAt = new Date();
    // Raw, storing what createMany stores (a test compares them): every step appends, and createMany's
    // plan (the entries are in its request) was compiled anew for every batch, ~0.5 ms against ~0.1.
    const rows = entries.map(
      (entry) => Prisma.sql`(${sessionId}, ${entry.position}, ${entry.kind}, ${entry.data}, ${createdAt})`,
    );
    await tx.$executeRaw`INSERT INTO "HistoryEntry" ("sessionId", "position", "kind", "data", "createdAt") VALUES ${Prisma.join(rows)}`;
  };
  if (claim) await fenced(db, { sessionId, epoch: claim.epoch }, write);
  else await db.$transaction(write);
}

/** Whether these very entries are stored (by position and content). */
async function storedAlready(tx: Prisma.TransactionClient, sessionId: string, entries: HistoryRow[]): Promise<boolean> {
  const rows = await tx.historyEntry.findMany({
    where: { sessionId, position: { gte: entries[0].position, lte: entries[entries.length - 1].position } },
    orderBy: { position: "asc" },
    select: { position: true, kind: true, data: true },
  });
  return (
    rows.length === entries.length &&
    rows.every(
      (row, i) => row.position === entries[i].position && row.kind === entries[i].kind && row.data === entries[i].data,
    )
  );
}

export async function readHistory(db: Db, sessionId: string) {
  return db.historyEntry.findMany({ where: { sessionId }, orderBy: { position: "asc" } });
}

/** Drops entries at and after `position` (rewind, D-Mail, compaction rewrite). */
export async function truncateHistory(db: Db, sessionId: string, position: number) {
  await db.historyEntry.deleteMany({ where: { sessionId, position: { gte: position } } });
}
