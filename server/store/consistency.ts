import { settleAnnouncedCheckpoints } from "./checkpoints";
import type { Db } from "./db";

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
  return [
    ...(await historyGaps(db)),
    ...(await unsavedCheckpoints(db, options.fix)),
    ...(await laggingCounters(db, options.fix)),
    ...(await turnsCompletedTwice(db)),
    ...(await silentDecisions(db)),
    ...(await staleClaims(db, options.fix)),
  ];
}

/** Ids per `in` list: far below SQLite's and PostgreSQL's limits on bound values. */
const IDS_PER_QUERY = 500;

/** `query` over `ids` in slices of IDS_PER_QUERY, results concatenated. */
async function inSlices<T>(ids: string[], query: (slice: string[]) => Promise<T[]>): Promise<T[]> {
  const found: T[] = [];
  for (let start = 0; start < ids.length; start += IDS_PER_QUERY)
    found.push(...(await query(ids.slice(start, start + IDS_PER_QUERY))));
  return found;
}

async function historyGaps(db: Db): Promise<Finding[]> {
  const sessions = await db.historyEntry.groupBy({
    by: ["sessionId"],
    _count: { _all: true },
    _max: { position: true },
  });
  return sessions
    .filter((row) => row._count._all !== (row._max.position ?? -1) + 1)
    .map((row) => ({
      kind: "history_gap",
      sessionId: row.sessionId,
      detail: `history has ${row._count._all} entries but its last position is ${row._max.position}`,
      fixed: false,
    }));
}

function checkpointIdOf(payload: string): string | null {
  try {
    const id = (JSON.parse(payload) as { checkpointId?: unknown }).checkpointId;
    return typeof id === "string" ? id : null;
  } catch {
    return null; // an unreadable announcement names no checkpoint to look for
  }
}

/** Checkpoints an ended turn announced whose row was never written (a running turn's row follows its event). */
async function unsavedCheckpoints(db: Db, fix: boolean): Promise<Finding[]> {
  const announced = (
    await db.event.findMany({
      where: { type: "checkpoint.created", turnId: { not: null } },
      orderBy: [{ sessionId: "asc" }, { seq: "asc" }],
      select: { sessionId: true, turnId: true, payload: true },
    })
  ).map((event) => ({
    sessionId: event.sessionId,
    turnId: event.turnId!,
    checkpointId: checkpointIdOf(event.payload),
  }));
  const turnIds = [...new Set(announced.map((event) => event.turnId))];
  const ended = new Set(
    (
      await inSlices(turnIds, (ids) =>
        db.turn.findMany({
          where: { id: { in: ids }, status: { notIn: ["running", "waiting"] } },
          select: { id: true },
        }),
      )
    ).map((turn) => turn.id),
  );
  const candidates = announced.filter((event) => ended.has(event.turnId) && event.checkpointId !== null);
  const stored = new Set(
    (
      await inSlices([...new Set(candidates.map((event) => event.checkpointId!))], (ids) =>
        db.checkpoint.findMany({ where: { id: { in: ids } }, select: { id: true } }),
      )
    ).map((checkpoint) => checkpoint.id),
  );
  const findings: Finding[] = [];
  const settled = new Set<string>();
  for (const row of candidates.filter((event) => !stored.has(event.checkpointId!))) {
    if (fix && !settled.has(row.turnId)) {
      settled.add(row.turnId);
      await settleAnnouncedCheckpoints(db, row.sessionId, row.turnId);
    }
    const detail = `checkpoint ${row.checkpointId} was announced by turn ${row.turnId} but never stored`;
    findings.push({ kind: "announced_checkpoint_without_row", sessionId: row.sessionId, detail, fixed: fix });
  }
  return findings;
}

/** Sessions whose next checkpoint number is not past their last checkpoint's (raised past it). */
async function laggingCounters(db: Db, fix: boolean): Promise<Finding[]> {
  const lasts = await db.checkpoint.groupBy({ by: ["sessionId"], _max: { number: true } });
  const last = new Map(lasts.map((row) => [row.sessionId, row._max.number ?? -1]));
  const sessions = await inSlices([...last.keys()], (ids) =>
    db.session.findMany({ where: { id: { in: ids } }, select: { id: true, nextCheckpoint: true } }),
  );
  const findings: Finding[] = [];
  for (const session of sessions.filter((row) => row.nextCheckpoint <= last.get(row.id)!)) {
    const next = last.get(session.id)! + 1;
    if (fix) {
      await db.session.updateMany({
        where: { id: session.id, nextCheckpoint: { lt: next } },
        data: { nextCheckpoint: next },
      });
    }
    const detail = `next checkpoint number was ${session.nextCheckpoint}, checkpoint ${next - 1} exists`;
    findings.push({ kind: "checkpoint_counter", sessionId: session.id, detail, fixed: fix });
  }
  return findings;
}

async function turnsCompletedTwice(db: Db): Promise<Finding[]> {
  const turns = await db.event.groupBy({
    by: ["sessionId", "turnId"],
    where: { type: "turn.completed", turnId: { not: null } },
    _count: { _all: true },
    having: { turnId: { _count: { gt: 1 } } },
  });
  return turns.map((row) => ({
    kind: "turn_completed_twice",
    sessionId: row.sessionId,
    detail: `turn ${row.turnId} has ${row._count._all} turn.completed events`,
    fixed: false,
  }));
}

/** Accepted or rejected requests no `approval.decided` event of their session names. */
async function silentDecisions(db: Db): Promise<Finding[]> {
  const decided = await db.approval.findMany({
    where: { status: { in: ["approved", "rejected"] } },
    select: { id: true, sessionId: true, status: true },
  });
  const sessionIds = [...new Set(decided.map((approval) => approval.sessionId))];
  const events = await inSlices(sessionIds, (ids) =>
    db.event.findMany({
      where: { sessionId: { in: ids }, type: "approval.decided" },
      select: { sessionId: true, payload: true },
    }),
  );
  const payloads = new Map<string, string[]>();
  for (const event of events) {
    const list = payloads.get(event.sessionId) ?? [];
    list.push(event.payload);
    payloads.set(event.sessionId, list);
  }
  return decided
    .filter((approval) => !payloads.get(approval.sessionId)?.some((payload) => payload.includes(approval.id)))
    .map((row) => ({
      kind: "decision_without_event",
      sessionId: row.sessionId,
      detail: `approval ${row.id} is ${row.status} but no approval.decided event records it`,
      fixed: false,
    }));
}

/** Claims held by an owner that no longer exists (released, the epoch raised). */
async function staleClaims(db: Db, fix: boolean): Promise<Finding[]> {
  const claimed = await db.session.findMany({
    where: { claimOwnerId: { not: null } },
    select: { id: true, claimOwnerId: true },
  });
  const owners = new Set((await db.owner.findMany({ select: { id: true } })).map((owner) => owner.id));
  const findings: Finding[] = [];
  for (const row of claimed.filter((session) => !owners.has(session.claimOwnerId!))) {
    if (fix) {
      await db.session.updateMany({
        where: { id: row.id, claimOwnerId: row.claimOwnerId },
        data: { epoch: { increment: 1 }, claimOwnerId: null },
      });
    }
    const detail = `claimed by ${row.claimOwnerId}, a process that no longer exists`;
    findings.push({ kind: "stale_claim", sessionId: row.id, detail, fixed: fix });
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
