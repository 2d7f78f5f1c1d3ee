import type { Db } from "./db";
import { isUniqueViolation } from "./dialect";

export type RoutineRow = NonNullable<Awaited<ReturnType<typeof getRoutine>>>;
export type RoutineRunRow = Awaited<ReturnType<typeof listRoutineRuns>>[number];

export interface RoutineData {
  name: string;
  prompt: string;
  workspace: string;
  runner: string | null;
  isolation: string;
  model: string | null;
  mode: string;
  schedule: string | null;
  budgetUsd: number | null;
}

export function createRoutine(db: Db, data: RoutineData & { tokenHash: string; ownerId: string | null }) {
  return db.routine.create({ data });
}

export function getRoutine(db: Db, id: string) {
  return db.routine.findUnique({ where: { id } });
}

export function listRoutines(db: Db, ownerId?: string) {
  return db.routine.findMany({ where: ownerId ? { ownerId } : {}, orderBy: { createdAt: "asc" } });
}

export function scheduledRoutines(db: Db) {
  return db.routine.findMany({ where: { schedule: { not: null } }, select: { id: true, schedule: true } });
}

export function findRoutineByTokenHash(db: Db, tokenHash: string) {
  return db.routine.findUnique({ where: { tokenHash } });
}

export function updateRoutine(db: Db, id: string, data: Partial<RoutineData>) {
  return db.routine.update({ where: { id }, data });
}

export async function deleteRoutine(db: Db, id: string): Promise<boolean> {
  const { count } = await db.routine.deleteMany({ where: { id } });
  return count > 0;
}

export function listRoutineRuns(db: Db, routineId: string, limit = 100) {
  return db.routineRun.findMany({ where: { routineId }, orderBy: { startedAt: "desc" }, take: limit });
}

/** Runs that hold their routine's active claim and have a session: what a bridge watches end. */
export function activeRoutineRuns(db: Db) {
  return db.routineRun.findMany({ where: { activeKey: { not: null }, sessionId: { not: null } } });
}

export type RunClaim = "running" | "queued" | "taken";

/**
 * Claims a run of a routine: running when none runs, else queued when none waits, else "taken"
 * (a scheduled slot another bridge fired, or a queue that already holds one). Unique keys do the
 * arbitration, so it holds across bridges.
 */
export async function claimRoutineRun(
  db: Db,
  input: { routineId: string; trigger: string; input: string | null; slot?: string },
): Promise<{ claim: RunClaim; run: RoutineRunRow | null }> {
  const { routineId, trigger, slot } = input;
  const slotKey = slot ? `${routineId}@${slot}` : null;
  const base = { routineId, trigger, input: input.input, slotKey };
  try {
    const run = await db.routineRun.create({ data: { ...base, status: "running", activeKey: routineId } });
    return { claim: "running", run };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  if (slotKey && (await db.routineRun.findUnique({ where: { slotKey } }))) return { claim: "taken", run: null };
  try {
    const run = await db.routineRun.create({ data: { ...base, status: "queued", queuedKey: routineId } });
    return { claim: "queued", run };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  if (slotKey) return { claim: "taken", run: null };
  return { claim: "taken", run: await db.routineRun.findUnique({ where: { queuedKey: routineId } }) };
}

export function setRunSession(db: Db, runId: string, sessionId: string) {
  return db.routineRun.update({ where: { id: runId }, data: { sessionId } });
}

/** Ends a run and frees its routine; false when another bridge ended it first. */
export async function endRoutineRun(
  db: Db,
  runId: string,
  end: { status: string; error?: string | null; costUsd?: number | null },
): Promise<boolean> {
  const { count } = await db.routineRun.updateMany({
    where: { id: runId, endedAt: null },
    data: {
      status: end.status,
      error: end.error ?? null,
      costUsd: end.costUsd ?? null,
      endedAt: new Date(),
      activeKey: null,
    },
  });
  return count > 0;
}

/** Moves the routine's queued run (if any) to running; null when none waits or another bridge moved it. */
export async function promoteQueuedRun(db: Db, routineId: string): Promise<RoutineRunRow | null> {
  const queued = await db.routineRun.findUnique({ where: { queuedKey: routineId } });
  if (!queued) return null;
  try {
    const { count } = await db.routineRun.updateMany({
      where: { id: queued.id, queuedKey: routineId },
      data: { queuedKey: null, activeKey: routineId, status: "running", startedAt: new Date() },
    });
    return count > 0 ? { ...queued, status: "running" } : null;
  } catch (error) {
    if (isUniqueViolation(error)) return null; // another run holds the routine: it promotes this one when it ends
    throw error;
  }
}

/** The statuses of a session's turns, newest first: how a run's session is doing. */
export function sessionTurnStatuses(db: Db, sessionId: string) {
  return db.turn.findMany({ where: { sessionId }, orderBy: { number: "desc" }, select: { status: true } });
}

/** A session's budget and its owner's daily budget (server/budgets). */
export async function budgetsOfSession(db: Db, sessionId: string) {
  // One request with its owner: read before every step, the first token's included.
  const row = await db.session.findUnique({
    where: { id: sessionId },
    select: {
      budgetUsd: true,
      budgetStepUsd: true,
      budgetTokens: true,
      access: { where: { access: "owner" }, select: { subject: true }, take: 1 },
    },
  });
  const owner = row?.access[0]?.subject;
  const person = owner
    ? await db.user.findUnique({ where: { id: owner }, select: { id: true, budgetUsd: true } })
    : null;
  return { session: row, person };
}

/** Raises a session's budget by its first size, once per call ("allow" on a budget request). */
export async function raiseSessionBudget(db: Db, sessionId: string, by: number) {
  return db.session.update({ where: { id: sessionId }, data: { budgetUsd: { increment: by } } });
}

/** Raises a token budget by a size, once per call. */
export async function raiseSessionTokenBudget(db: Db, sessionId: string, by: number) {
  return db.session.update({ where: { id: sessionId }, data: { budgetTokens: { increment: by } } });
}
