import { FencedError, fenced } from "./claims";
import type { Db } from "./db";
import type { Prisma } from "./generated/prisma/client";
import { isUniqueViolation } from "./dialect";
import { newId } from "./ids";

/** Tries of createTurn's insert when another process took the same number (PostgreSQL only). */
const TURN_NUMBER_TRIES = 5;

/**
 * A turn numbered after the session's last one, in one statement: the number is taken in the
 * insert itself (raw: Prisma cannot take it inside its insert), so two processes on the database (an ACP agent next to the web bridge) cannot
 * take the same one, and every prompt saves Prisma's read-then-create (~1 ms of the event loop
 * on the way to the first token; the raw statement ~0.1 ms). The row is what `create` returns
 * (tests/unit/store compares them). SQLite runs the statement alone; on PostgreSQL two can read the
 * same MAX under READ COMMITTED, and the unique (sessionId, number) makes the later one retry.
 */
export async function createTurn(db: Db, sessionId: string, prompt: string, epoch = 0): Promise<Prisma.TurnModel> {
  const id = newId();
  const startedAt = new Date();
  let rows: { number: number }[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      rows = await db.$queryRaw<{ number: number }[]>`
        INSERT INTO "Turn" ("id", "sessionId", "number", "status", "prompt", "startedAt", "epoch")
        SELECT ${id}, ${sessionId}, COALESCE(MAX("number"), 0) + 1, 'running', ${prompt}, ${startedAt}, ${epoch} FROM "Turn" WHERE "sessionId" = ${sessionId}
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
    epoch,
    runState: null,
  };
}

/**
 * Writes a turn's end. With `claim`, only while the session is still at the claim's epoch and the
 * turn still running (a sweep that interrupted it, or a takeover, makes this a `session:fenced`
 * error instead of a second ending). Idempotent: a retry after a lost answer finds the turn ended
 * with this status and succeeds. False when the turn is gone (its session was deleted).
 */
export async function finishTurn(
  db: Db,
  id: string,
  data: { status: string; stats?: string; error?: string },
  claim?: { sessionId: string; epoch: number },
): Promise<boolean> {
  const endedAt = new Date();
  if (!claim) {
    const { count } = await db.turn.updateMany({ where: { id }, data: { ...data, endedAt, runState: null } });
    return count === 1;
  }
  // In a fenced() transaction, not one UPDATE with a relation filter on the session: Prisma makes that
  // a plain EXISTS, which on PostgreSQL reads the statement's snapshot and could land after a takeover.
  const { count } = await fenced(db, claim, (tx) =>
    tx.turn.updateMany({
      where: { id, status: { in: ["running", "waiting"] } },
      data: { ...data, endedAt, runState: null },
    }),
  );
  if (count === 1) return true;
  const row = await db.turn.findUnique({ where: { id }, select: { status: true } });
  if (!row) return false;
  if (row.status === data.status) return true;
  throw new FencedError(claim.sessionId, claim.epoch);
}

export async function getTurn(db: Db, id: string) {
  return db.turn.findUnique({ where: { id } });
}

/** How the session's last finished turn's last model step ended (`stop_reason`), null when unknown. */
export async function lastStopReason(db: Db, sessionId: string): Promise<string | null> {
  const row = await db.turn.findFirst({
    where: { sessionId, endedAt: { not: null } },
    orderBy: { endedAt: "desc" },
    select: { stats: true },
  });
  try {
    const stats = JSON.parse(row?.stats ?? "{}") as { stop_reason?: unknown };
    return typeof stats.stop_reason === "string" ? stats.stop_reason : null;
  } catch {
    return null; // a row written by a broken build: unknown, like a turn from before stop reasons
  }
}

/** A session's token usage and cost, summed over its turns' stats (null where no turn reported one). */
export interface SessionUsage {
  input_tokens: number;
  cached_input_tokens: number | null;
  output_tokens: number;
  cost_usd: number | null;
}

export function sessionUsage(db: Db, sessionId: string): Promise<SessionUsage> {
  return usageOfTurns(db, { sessionId });
}

/**
 * Usage summed over the finished turns that started since `since` (a day's spend, server/budgets),
 * of every session or of those one person owns.
 */
export function usageSince(db: Db, since: Date, ownerId?: string): Promise<SessionUsage> {
  const owned = ownerId ? { session: { access: { some: { subject: ownerId, access: "owner" } } } } : {};
  return usageOfTurns(db, { startedAt: { gte: since }, ...owned });
}

async function usageOfTurns(db: Db, where: Prisma.TurnWhereInput): Promise<SessionUsage> {
  const rows = await db.turn.findMany({ where: { ...where, stats: { not: null } }, select: { stats: true } });
  const usage: SessionUsage = { input_tokens: 0, cached_input_tokens: null, output_tokens: 0, cost_usd: null };
  for (const row of rows) {
    let stats: {
      input_tokens?: number | null;
      cached_input_tokens?: number | null;
      output_tokens?: number;
      cost_usd?: number | null;
    };
    try {
      stats = JSON.parse(row.stats ?? "{}") as typeof stats;
    } catch {
      continue; // a row written by a broken build is not worth failing the session view over
    }
    usage.input_tokens += stats.input_tokens ?? 0;
    usage.output_tokens += stats.output_tokens ?? 0;
    if (typeof stats.cached_input_tokens === "number")
      usage.cached_input_tokens = (usage.cached_input_tokens ?? 0) + stats.cached_input_tokens;
    if (typeof stats.cost_usd === "number") usage.cost_usd = (usage.cost_usd ?? 0) + stats.cost_usd;
  }
  if (usage.cost_usd !== null) usage.cost_usd = Math.round(usage.cost_usd * 1e6) / 1e6;
  return usage;
}
