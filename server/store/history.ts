import type { Db } from "./db";

/** The model-facing conversation: append-only entries with positions from 0. */
export async function appendHistory(
  db: Db,
  sessionId: string,
  entries: { position: number; kind: string; data: string }[],
) {
  if (entries.length === 0) return;
  await db.historyEntry.createMany({ data: entries.map((entry) => ({ ...entry, sessionId })) });
}

export async function readHistory(db: Db, sessionId: string) {
  return db.historyEntry.findMany({ where: { sessionId }, orderBy: { position: "asc" } });
}

/** Drops entries at and after `position` (rewind, D-Mail, compaction rewrite). */
export async function truncateHistory(db: Db, sessionId: string, position: number) {
  await db.historyEntry.deleteMany({ where: { sessionId, position: { gte: position } } });
}
