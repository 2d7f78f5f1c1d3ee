import type { Db } from "./db";
import { Prisma } from "./generated/prisma/client";
import { newId } from "./ids";

/** A checkpoint row as stored (filesChanged is a JSON string; the service parses it). */
export type CheckpointRow = Prisma.CheckpointModel;

/** Creates the session's next checkpoint (numbers are per session, from 0). */
export async function createCheckpoint(
  db: Db,
  input: {
    sessionId: string;
    turn: number;
    step: number;
    historyPosition: number;
    reason: string;
    snapshot?: string | null;
    filesChanged?: string;
    note?: string | null;
    /** Given by a caller that counts numbers itself (the agent's fallback port), saving the lookup. */
    id?: string;
    number?: number;
  },
) {
  if (input.number !== undefined) return insertCheckpoint(db, { ...input, number: input.number });
  const last = await db.checkpoint.findFirst({
    where: { sessionId: input.sessionId },
    orderBy: { number: "desc" },
    select: { number: true },
  });
  return db.checkpoint.create({ data: { ...input, number: last === null ? 0 : last.number + 1 } });
}

export async function getCheckpoint(db: Db, id: string) {
  return db.checkpoint.findUnique({ where: { id } });
}

/** A checkpoint by its per-session number (what the model and `/undo` refer to). */
export async function getCheckpointByNumber(db: Db, sessionId: string, number: number) {
  return db.checkpoint.findUnique({ where: { sessionId_number: { sessionId, number } } });
}

/** The session's checkpoints, oldest first. */
export async function listCheckpoints(db: Db, sessionId: string) {
  return db.checkpoint.findMany({ where: { sessionId }, orderBy: { number: "asc" } });
}

/**
 * The session's newest checkpoint. Raw, with exactly findFirst's row (tests/unit/store compares
 * them): it is read at every agent step, and Prisma's query building cost ~0.65 ms of ~1 ms.
 */
export async function lastCheckpoint(db: Db, sessionId: string): Promise<CheckpointRow | null> {
  const rows = await db.$queryRaw<CheckpointRow[]>`
    SELECT * FROM "Checkpoint" WHERE "sessionId" = ${sessionId} ORDER BY "number" DESC LIMIT 1`;
  return rows[0] ?? null;
}

/** A checkpoint row with its number given: raw, like lastCheckpoint, since one is written at every step. */
async function insertCheckpoint(
  db: Db,
  input: Parameters<typeof createCheckpoint>[1] & { number: number },
): Promise<CheckpointRow> {
  const rows = await db.$queryRaw<CheckpointRow[]>`
    INSERT INTO "Checkpoint" ("id", "sessionId", "number", "turn", "step", "historyPosition", "snapshot", "filesChanged", "reason", "note", "createdAt")
    VALUES (${input.id ?? newId()}, ${input.sessionId}, ${input.number}, ${input.turn}, ${input.step}, ${input.historyPosition},
      ${input.snapshot ?? null}, ${input.filesChanged ?? "[]"}, ${input.reason}, ${input.note ?? null}, ${new Date()})
    RETURNING *`;
  return rows[0];
}
