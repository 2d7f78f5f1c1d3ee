import type { Db } from "./db";
import type { Prisma } from "./generated/prisma/client";

export type WorktreeRow = Prisma.WorktreeModel;

/** A session's worktree, recorded once `git worktree add` made it (server/worktrees). */
export async function createWorktree(
  db: Db,
  data: { sessionId: string; path: string; branch: string; base: string; repo: string; setup: string | null },
): Promise<WorktreeRow> {
  return db.worktree.create({ data });
}

export async function getWorktree(db: Db, sessionId: string): Promise<WorktreeRow | null> {
  return db.worktree.findUnique({ where: { sessionId } });
}

/** The worktrees of these sessions, by session id (the session list reads them in one query). */
export async function worktreesOf(db: Db, sessionIds: string[]): Promise<Map<string, WorktreeRow>> {
  if (sessionIds.length === 0) return new Map();
  const rows = await db.worktree.findMany({ where: { sessionId: { in: sessionIds } } });
  return new Map(rows.map((row) => [row.sessionId, row]));
}

export async function listWorktrees(db: Db): Promise<WorktreeRow[]> {
  return db.worktree.findMany({ orderBy: { createdAt: "asc" } });
}

export async function updateWorktree(
  db: Db,
  sessionId: string,
  data: Partial<
    Pick<
      WorktreeRow,
      "mergedSha" | "pushedSha" | "archiveSnapshot" | "setup" | "changedFiles" | "additions" | "deletions" | "changesAt"
    >
  >,
): Promise<WorktreeRow> {
  return db.worktree.update({ where: { sessionId }, data });
}
