import type { Db } from "./db";
import type { Prisma } from "./generated/prisma/client";
import { isUniqueViolation } from "./dialect";
import { newId } from "./ids";

/** Tries of createTurn's insert when another process took the same number (PostgreSQL only). */
const TURN_NUMBER_TRIES = 5;

/**
 * A turn numbered after the session's last one, in one statement: the number is taken in the
 * insert itself, so two processes on the database (an ACP agent next to the web bridge) cannot
 * take the same one, and every prompt saves Prisma's read-then-create (~1 ms of the event loop
 * on the way to the first token; the raw statement ~0.1 ms). The row is what `create` returns
 * (tests/unit/store compares them). SQLite runs the statement alone; on PostgreSQL two can read the
 * same MAX under READ COMMITTED, and the unique (sessionId, number) makes the later one retry.
 */
export async function createTurn(
  db: Db,
  sessionId: string,
  prompt: string,
  ownerId: string | null = null,
): Promise<Prisma.TurnModel> {
  const id = newId();
  const startedAt = new Date();
  let rows: { number: number }[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      rows = await db.$queryRaw<{ number: number }[]>`
        INSERT INTO "Turn" ("id", "sessionId", "number", "status", "prompt", "startedAt", "ownerId")
        SELECT ${id}, ${sessionId}, COALESCE(MAX("number"), 0) + 1, 'running', ${prompt}, ${startedAt}, ${ownerId} FROM "Turn" WHERE "sessionId" = ${sessionId}
        RETURNING "number"`;
      break;
    } catch (error) {
      if (attempt >= TURN_NUMBER_TRIES || !isUniqueViolation(error)) throw error;
    }
  }
  const [row] = rows;
  return {
    id,
    sessionId,
    number: Number(row.number),
    status: "running",
    prompt,
    stats: null,
    error: null,
    startedAt,
    endedAt: null,
    ownerId,
  };
}

export async function finishTurn(db: Db, id: string, data: { status: string; stats?: string; error?: string }) {
  return db.turn.update({ where: { id }, data: { ...data, endedAt: new Date() } });
}

export async function getTurn(db: Db, id: string) {
  return db.turn.findUnique({ where: { id } });
}
