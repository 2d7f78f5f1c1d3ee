import type { Prisma } from "./generated/prisma/client";
import type { Db } from "./db";

export async function createRule(
  db: Db,
  data: {
    scope: string;
    sessionId?: string | null;
    workspaceId?: string | null;
    tool: string;
    pattern: string;
    action: string;
    expiresAt?: Date | null;
  },
) {
  return db.rule.create({ data });
}

/** Deletes a rule; false when there was none with this id. */
export async function deleteRule(db: Db, id: string): Promise<boolean> {
  const { count } = await db.rule.deleteMany({ where: { id } });
  return count > 0;
}

/** Rules that can apply to a call in this session: its own, its workspace's and global ones, unexpired. */
export async function listApplicableRules(db: Db, sessionId: string, workspaceId: string, now: Date = new Date()) {
  // Raw, with exactly findMany's rows (a test compares them): read for every tool call, where a
  // first Prisma query of its shape cost print mode's shell step (bench/README.md, "Raw SQL").
  return db.$queryRaw<Prisma.RuleModel[]>`
    SELECT * FROM "Rule"
    WHERE ("scope" = 'global' OR ("scope" = 'workspace' AND "workspaceId" = ${workspaceId})
        OR ("scope" = 'session' AND "sessionId" = ${sessionId}))
      AND ("expiresAt" IS NULL OR "expiresAt" > ${now})
    ORDER BY "createdAt" ASC`;
}

/** Every rule, or those that apply to one session, newest first; expired ones included so the UI can show them. */
export async function listRules(db: Db, filter: { sessionId?: string; workspaceId?: string } = {}) {
  const rows = await db.rule.findMany({
    where: filter.sessionId
      ? {
          OR: [
            { scope: "global" },
            { scope: "workspace", workspaceId: filter.workspaceId },
            { scope: "session", sessionId: filter.sessionId },
          ],
        }
      : {},
    orderBy: { createdAt: "desc" },
    take: 1000,
  });
  const workspaceIds = [...new Set(rows.map((row) => row.workspaceId).filter((id): id is string => Boolean(id)))];
  const workspaces = workspaceIds.length
    ? await db.workspace.findMany({ where: { id: { in: workspaceIds } }, select: { id: true, path: true } })
    : [];
  const paths = new Map(workspaces.map((w) => [w.id, w.path]));
  return rows.map((row) => ({ ...row, workspacePath: row.workspaceId ? (paths.get(row.workspaceId) ?? null) : null }));
}

export async function getWorkspaceByPath(db: Db, workspacePath: string) {
  return db.workspace.findUnique({ where: { path: workspacePath } });
}
