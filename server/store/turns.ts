import { Prisma } from "./generated/prisma/client";
import type { Db } from "./db";

/**
 * A turn numbered after the session's last one. A caller that keeps count passes the number it
 * expects (one query less); when another process took it (an ACP agent on the same database),
 * the number is read from the database after all.
 */
export async function createTurn(db: Db, sessionId: string, prompt: string, expected?: number) {
  if (expected !== undefined) {
    try {
      return await db.turn.create({ data: { sessionId, prompt, number: expected } });
    } catch (error) {
      if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002")) throw error;
    }
  }
  const last = await db.turn.findFirst({ where: { sessionId }, orderBy: { number: "desc" }, select: { number: true } });
  return db.turn.create({ data: { sessionId, prompt, number: (last?.number ?? 0) + 1 } });
}

export async function finishTurn(db: Db, id: string, data: { status: string; stats?: string; error?: string }) {
  return db.turn.update({ where: { id }, data: { ...data, endedAt: new Date() } });
}

export async function getTurn(db: Db, id: string) {
  return db.turn.findUnique({ where: { id } });
}

/** Turns a dead bridge left running are marked interrupted on start. */
export async function interruptRunningTurns(db: Db) {
  const running = await db.turn.findMany({ where: { status: { in: ["running", "waiting"] } } });
  await db.turn.updateMany({
    where: { status: { in: ["running", "waiting"] } },
    data: { status: "interrupted", endedAt: new Date() },
  });
  return running;
}
