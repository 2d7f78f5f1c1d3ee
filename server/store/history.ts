import type { Db } from "./db";
import { Prisma } from "./generated/prisma/client";

/** The model-facing conversation: append-only entries with positions from 0. */
export async function appendHistory(
  db: Db,
  sessionId: string,
  entries: { position: number; kind: string; data: string }[],
) {
  if (entries.length === 0) return;
  // Raw, storing what createMany stores (tests/unit/store compares them): written at every agent step.
  const now = new Date();
  const rows = entries.map(
    (entry) => Prisma.sql`(${sessionId}, ${entry.position}, ${entry.kind}, ${entry.data}, ${now})`,
  );
  await db.$executeRaw`INSERT INTO "HistoryEntry" ("sessionId", "position", "kind", "data", "createdAt") VALUES ${Prisma.join(rows)}`;
}

export async function readHistory(db: Db, sessionId: string) {
  return db.historyEntry.findMany({ where: { sessionId }, orderBy: { position: "asc" } });
}

/** Drops entries at and after `position` (rewind, D-Mail, compaction rewrite). */
export async function truncateHistory(db: Db, sessionId: string, position: number) {
  await db.historyEntry.deleteMany({ where: { sessionId, position: { gte: position } } });
}
