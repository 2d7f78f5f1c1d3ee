import { FencedError, heldAt, takeCheckpointNumber } from "./claims";
import type { Db } from "./db";
import { Prisma } from "./generated/prisma/client";
import { newId } from "./ids";

/** A checkpoint row as stored (filesChanged is a JSON string; the service parses it). */
export type CheckpointRow = Prisma.CheckpointModel;

/**
 * Creates a checkpoint (numbers are per session, from 0). The number is the one the caller took
 * with `takeCheckpointNumber` (it announces it before the row exists), or one taken here. With
 * `claim` (a turn's checkpoint) the row is written only while the session is at the claim's epoch,
 * else `session:fenced`.
 */
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
    /** Given by a caller that took it already (with takeCheckpointNumber) and announced it. */
    id?: string;
    number?: number;
  },
  claim?: { epoch: number },
) {
  const number = input.number ?? (await takeCheckpointNumber(db, input.sessionId));
  return insertCheckpoint(db, { ...input, id: input.id ?? newId(), number }, claim);
}

/** Said on a checkpoint row written for a turn whose bridge stopped before storing it. */
const LOST_SNAPSHOT_NOTE =
  "The bridge running this turn stopped before this checkpoint's snapshot was saved: the conversation can be rewound here, the files cannot.";

/**
 * Rows for the checkpoints a turn announced (its `checkpoint.created` events) that its bridge never
 * stored: it died, or lost its claim, between the announcement and the row (the row follows the
 * snapshot). Each gets a row without a snapshot, at the end of the stored history, so no announced
 * checkpoint is missing; a row the bridge did store (same id) is left as it is. Returns how many.
 */
export async function settleAnnouncedCheckpoints(db: Db, sessionId: string, turnId: string): Promise<number> {
  const events = await db.event.findMany({
    where: { sessionId, turnId, type: "checkpoint.created" },
    select: { payload: true },
  });
  const announced = events.map(
    (event) =>
      JSON.parse(event.payload) as { checkpointId: string; number: number; turn: number; step: number; reason: string },
  );
  const stored = await db.checkpoint.findMany({
    where: { id: { in: announced.map((checkpoint) => checkpoint.checkpointId) } },
    select: { id: true },
  });
  const missing = announced.filter((checkpoint) => !stored.some((row) => row.id === checkpoint.checkpointId));
  if (missing.length === 0) return 0;
  const historyPosition = await db.historyEntry.count({ where: { sessionId } });
  for (const checkpoint of missing) {
    const { checkpointId: id, number, turn, step, reason } = checkpoint;
    await db.checkpoint.upsert({
      where: { id },
      create: { id, sessionId, number, turn, step, reason, historyPosition, note: LOST_SNAPSHOT_NOTE },
      update: {},
    });
  }
  return missing.length;
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

/** The session's newest checkpoint. */
export async function lastCheckpoint(db: Db, sessionId: string): Promise<CheckpointRow | null> {
  return db.checkpoint.findFirst({ where: { sessionId }, orderBy: { number: "desc" } });
}

/**
 * A checkpoint row with its number given. A retry of a write that went through (the answer was
 * lost) finds its row by id: the durable writer may run it twice. Fenced, it is an INSERT … SELECT
 * with `heldAt` (whose WHERE also tells SQLite the ON CONFLICT is the upsert's).
 */
async function insertCheckpoint(
  db: Db,
  input: Parameters<typeof createCheckpoint>[1] & { id: string; number: number },
  claim?: { epoch: number },
): Promise<CheckpointRow> {
  const held = claim ? heldAt(db, { sessionId: input.sessionId, epoch: claim.epoch }) : Prisma.sql`1 = 1`;
  // Raw: Prisma cannot make an insert conditional on another row (the epoch) nor idempotent by id in
  // one statement; one is written at every step, where a fenced() transaction costs 4× (claims.ts).
  const rows = await db.$queryRaw<CheckpointRow[]>`
    INSERT INTO "Checkpoint" ("id", "sessionId", "number", "turn", "step", "historyPosition", "snapshot", "filesChanged", "reason", "note", "createdAt")
    SELECT ${input.id}, ${input.sessionId}, ${input.number}, ${input.turn}, ${input.step}, ${input.historyPosition},
      ${input.snapshot ?? null}, ${input.filesChanged ?? "[]"}, ${input.reason}, ${input.note ?? null}, ${new Date()}
    WHERE ${held}
    ON CONFLICT ("id") DO NOTHING
    RETURNING *`;
  if (rows[0]) return rows[0];
  const stored = await db.checkpoint.findUnique({ where: { id: input.id } });
  if (stored) return stored;
  if (claim) throw new FencedError(input.sessionId, claim.epoch);
  throw new Error(`checkpoint ${input.id} was neither inserted nor found`);
}
