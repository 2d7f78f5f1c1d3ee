import { fenced } from "./claims";
import type { Db } from "./db";

const withSession = { session: { select: { title: true, workspace: { select: { path: true } } } } } as const;

export type ApprovalRow = NonNullable<Awaited<ReturnType<typeof getApproval>>>;

/**
 * A pending request. With `claim` (asked by a turn's tool call) it is created only while the
 * session is at the claim's epoch, else `session:fenced`: in a `fenced()` transaction, since a
 * request waits on a person anyway. With `id`, a retry of a create that went through (the durable
 * writer runs a write again when its answer was lost) returns that row instead of a second one.
 */
export async function createApproval(
  db: Db,
  data: {
    id?: string;
    sessionId: string;
    turnId: string | null;
    toolCallId: string;
    tool: string;
    args: string;
    description: string;
    riskLevel: string;
    diff?: string | null;
    /** The process whose turn waits on it (server/leases). */
    ownerId?: string | null;
  },
  claim?: { epoch: number },
) {
  const created = data.id ? await getApproval(db, data.id) : null;
  if (created) return created;
  if (!claim) return db.approval.create({ data, include: withSession });
  return fenced(db, { sessionId: data.sessionId, epoch: claim.epoch }, (tx) =>
    tx.approval.create({ data, include: withSession }),
  );
}

export async function getApproval(db: Db, id: string) {
  return db.approval.findUnique({ where: { id }, include: withSession });
}

/**
 * Decides a pending request. The update is conditional on `status: "pending"`,
 * so of two racing deciders exactly one changes the row; the other gets `null`.
 */
/** `ownedBy`: only while that bridge still owns the request (a turn cancelling its own wait, not one taken over). */
export async function decidePendingApproval(
  db: Db,
  id: string,
  data: { status: string; decision?: string | null; feedback?: string | null; decidedBy?: string | null },
  ownedBy?: string,
): Promise<ApprovalRow | null> {
  const { count } = await db.approval.updateMany({
    where: { id, status: "pending", ...(ownedBy === undefined ? {} : { ownerId: ownedBy }) },
    data: { ...data, decidedAt: new Date() },
  });
  if (count === 0) return null;
  return getApproval(db, id);
}

export async function listApprovals(
  db: Db,
  filter: { status?: string[]; sessionId?: string; limit?: number; newestFirst?: boolean },
) {
  return db.approval.findMany({
    where: {
      ...(filter.status ? { status: { in: filter.status } } : {}),
      ...(filter.sessionId ? { sessionId: filter.sessionId } : {}),
    },
    orderBy: [{ createdAt: filter.newestFirst ? "desc" : "asc" }, { id: "asc" }],
    take: filter.limit ?? 200,
    include: withSession,
  });
}

/**
 * Moves whenever a request is created or decided, by any process: what the local bus compares
 * between ticks to tell the approval service that another process sharing the database changed the queue.
 */
export async function approvalsMark(db: Db): Promise<string> {
  const [latest, pending] = await Promise.all([
    db.approval.aggregate({ _max: { createdAt: true, decidedAt: true } }),
    db.approval.count({ where: { status: "pending" } }),
  ]);
  return `${latest._max.createdAt?.getTime() ?? 0}:${latest._max.decidedAt?.getTime() ?? 0}:${pending}`;
}
