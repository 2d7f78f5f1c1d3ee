import type { Db } from "./db";

export type CheckpointRow = Awaited<ReturnType<typeof createCheckpoint>>;

/** A checkpoint row; `number` is the next per-session counter (0-based, as Kimi CLI numbers them). */
export async function createCheckpoint(
  db: Db,
  input: { sessionId: string; turn: number; step: number; historyPosition: number; reason: string; snapshot?: string | null; filesChanged?: string; note?: string },
) {
  const last = await db.checkpoint.findFirst({ where: { sessionId: input.sessionId }, orderBy: { number: "desc" }, select: { number: true } });
  return db.checkpoint.create({ data: { ...input, number: last ? last.number + 1 : 0 } });
}

export async function listCheckpoints(db: Db, sessionId: string) {
  return db.checkpoint.findMany({ where: { sessionId }, orderBy: { number: "asc" } });
}

export async function getCheckpoint(db: Db, id: string) {
  return db.checkpoint.findUnique({ where: { id } });
}
