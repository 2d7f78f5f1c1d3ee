import type { Db } from "./db";

/** A checkpoint row as stored (filesChanged is a JSON string; the service parses it). */
export type CheckpointRow = NonNullable<Awaited<ReturnType<typeof getCheckpoint>>>;

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
  if (input.number !== undefined) return db.checkpoint.create({ data: { ...input, number: input.number } });
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

export async function lastCheckpoint(db: Db, sessionId: string) {
  return db.checkpoint.findFirst({ where: { sessionId }, orderBy: { number: "desc" } });
}
