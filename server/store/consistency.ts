import { settleAnnouncedCheckpoints } from "./checkpoints";
import { providerOf, type Db } from "./db";
import { Prisma } from "./generated/prisma/client";

/** One inconsistency found in the stored sessions, and whether the check repaired it. */
export interface Finding {
  kind:
    | "history_gap"
    | "checkpoint_counter"
    | "announced_checkpoint_without_row"
    | "turn_completed_twice"
    | "decision_without_event"
    | "stale_claim";
  sessionId: string;
  detail: string;
  fixed: boolean;
}

/**
 * What `worldline doctor` and every start check (a restart never needs a manual repair).
 * Repairs what has one right answer: a checkpoint an ended turn announced whose row was never
 * written (given a row without a snapshot, as the sweep does), a checkpoint counter behind the
 * numbers taken (raised past them), a claim held by an owner that no longer exists (released,
 * epoch raised). Reports what
 * cannot be repaired without guessing: gaps in a history, a turn ended twice in its append-only log,
 * an accepted decision with no `approval.decided` event.
 */
export async function checkConsistency(db: Db, options: { fix: boolean }): Promise<Finding[]> {
  const findings: Finding[] = [];

  const gaps = await db.$queryRaw<{ sessionId: string; count: bigint | number; last: number }[]>`
    SELECT "sessionId", COUNT(*) AS "count", MAX("position") AS "last" FROM "HistoryEntry"
    GROUP BY "sessionId" HAVING COUNT(*) <> MAX("position") + 1`;
  for (const row of gaps) {
    const detail = `history has ${Number(row.count)} entries but its last position is ${Number(row.last)}`;
    findings.push({ kind: "history_gap", sessionId: row.sessionId, detail, fixed: false });
  }

  // Only turns that ended: a running turn's row follows its event (after the snapshot).
  const checkpointId =
    providerOf(db) === "postgresql"
      ? Prisma.sql`(e."payload"::json ->> 'checkpointId')`
      : Prisma.sql`json_extract(e."payload", '$.checkpointId')`;
  const unsaved = await db.$queryRaw<{ sessionId: string; turnId: string; checkpointId: string }[]>`
    SELECT e."sessionId", e."turnId", ${checkpointId} AS "checkpointId" FROM "Event" e JOIN "Turn" t ON t."id" = e."turnId"
    WHERE e."type" = 'checkpoint.created' AND t."status" NOT IN ('running', 'waiting')
      AND NOT EXISTS (SELECT 1 FROM "Checkpoint" c WHERE c."id" = ${checkpointId})
    ORDER BY e."seq"`;
  const settled = new Set<string>();
  for (const row of unsaved) {
    if (options.fix && !settled.has(row.turnId)) {
      settled.add(row.turnId);
      await settleAnnouncedCheckpoints(db, row.sessionId, row.turnId);
    }
    const detail = `checkpoint ${row.checkpointId} was announced by turn ${row.turnId} but never stored`;
    findings.push({ kind: "announced_checkpoint_without_row", sessionId: row.sessionId, detail, fixed: options.fix });
  }

  const counters = await db.$queryRaw<{ id: string; nextCheckpoint: number; last: number }[]>`
    SELECT s."id", s."nextCheckpoint", MAX(c."number") AS "last" FROM "Session" s JOIN "Checkpoint" c ON c."sessionId" = s."id"
    GROUP BY s."id", s."nextCheckpoint" HAVING s."nextCheckpoint" <= MAX(c."number")`;
  for (const row of counters) {
    const next = Number(row.last) + 1;
    if (options.fix) {
      await db.$executeRaw`UPDATE "Session" SET "nextCheckpoint" = ${next} WHERE "id" = ${row.id} AND "nextCheckpoint" < ${next}`;
    }
    const detail = `next checkpoint number was ${Number(row.nextCheckpoint)}, checkpoint ${Number(row.last)} exists`;
    findings.push({ kind: "checkpoint_counter", sessionId: row.id, detail, fixed: options.fix });
  }

  const twice = await db.$queryRaw<{ sessionId: string; turnId: string; count: bigint | number }[]>`
    SELECT "sessionId", "turnId", COUNT(*) AS "count" FROM "Event" WHERE "type" = 'turn.completed' AND "turnId" IS NOT NULL
    GROUP BY "sessionId", "turnId" HAVING COUNT(*) > 1`;
  for (const row of twice) {
    const detail = `turn ${row.turnId} has ${Number(row.count)} turn.completed events`;
    findings.push({ kind: "turn_completed_twice", sessionId: row.sessionId, detail, fixed: false });
  }

  const silent = await db.$queryRaw<{ id: string; sessionId: string; status: string }[]>`
    SELECT a."id", a."sessionId", a."status" FROM "Approval" a
    WHERE a."status" IN ('approved', 'rejected') AND NOT EXISTS (
      SELECT 1 FROM "Event" e WHERE e."sessionId" = a."sessionId" AND e."type" = 'approval.decided' AND e."payload" LIKE '%' || a."id" || '%')`;
  for (const row of silent) {
    const detail = `approval ${row.id} is ${row.status} but no approval.decided event records it`;
    findings.push({ kind: "decision_without_event", sessionId: row.sessionId, detail, fixed: false });
  }

  const stale = await db.$queryRaw<{ id: string; claimOwnerId: string }[]>`
    SELECT s."id", s."claimOwnerId" FROM "Session" s
    WHERE s."claimOwnerId" IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "Owner" o WHERE o."id" = s."claimOwnerId")`;
  for (const row of stale) {
    if (options.fix) {
      await db.$executeRaw`
        UPDATE "Session" SET "epoch" = "epoch" + 1, "claimOwnerId" = NULL WHERE "id" = ${row.id} AND "claimOwnerId" = ${row.claimOwnerId}`;
    }
    const detail = `claimed by ${row.claimOwnerId}, a process that no longer exists`;
    findings.push({ kind: "stale_claim", sessionId: row.id, detail, fixed: options.fix });
  }
  return findings;
}

/** The outcome of a turn's `turn.completed` event, if its log has one (a turn whose status row lagged behind). */
export async function completedOutcome(db: Db, turnId: string): Promise<string | null> {
  const event = await db.event.findFirst({
    where: { turnId, type: "turn.completed" },
    orderBy: { seq: "asc" },
    select: { payload: true },
  });
  if (!event) return null;
  try {
    const outcome = (JSON.parse(event.payload) as { outcome?: unknown }).outcome;
    return typeof outcome === "string" ? outcome : "interrupted";
  } catch {
    return "interrupted"; // an unreadable payload still ended the turn
  }
}

/**
 * Sets a turn's status from its own log's ending, if it is still marked running at the epoch it was
 * found orphaned at (a takeover since moves it on): true if this call did.
 */
export async function settleCompletedTurn(db: Db, turn: { id: string; epoch: number }, outcome: string) {
  const { count } = await db.turn.updateMany({
    where: { id: turn.id, epoch: turn.epoch, status: { in: ["running", "waiting"] } },
    data: { status: outcome, endedAt: new Date() },
  });
  return count === 1;
}
