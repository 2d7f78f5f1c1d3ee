import type { Db } from "./db";

/** What a session's board state is read from (server/sessions/state.ts), for many sessions in two queries. */
export interface SessionActivity {
  /** Sessions with a pending approval or password request. */
  waiting: Set<string>;
  /** Each session's latest turn: its status and when it started. */
  lastTurn: Map<string, { status: string; startedAt: Date }>;
}

export async function sessionActivity(db: Db, sessionIds: string[]): Promise<SessionActivity> {
  if (sessionIds.length === 0) return { waiting: new Set(), lastTurn: new Map() };
  const [approvals, turns] = await Promise.all([
    db.approval.findMany({
      where: { sessionId: { in: sessionIds }, status: "pending" },
      select: { sessionId: true },
    }),
    db.turn.findMany({
      where: { sessionId: { in: sessionIds } },
      orderBy: [{ sessionId: "asc" }, { number: "desc" }],
      distinct: ["sessionId"],
      select: { sessionId: true, status: true, startedAt: true },
    }),
  ]);
  return {
    waiting: new Set(approvals.map((row) => row.sessionId)),
    lastTurn: new Map(turns.map((row) => [row.sessionId, { status: row.status, startedAt: row.startedAt }])),
  };
}
