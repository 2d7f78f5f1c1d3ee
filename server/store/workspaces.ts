import path from "node:path";
import type { Db } from "./db";

export async function upsertWorkspace(db: Db, workspacePath: string) {
  return db.workspace.upsert({
    where: { path: workspacePath },
    create: { path: workspacePath, name: path.basename(workspacePath) || workspacePath },
    update: { lastOpenedAt: new Date() },
  });
}

/** The folders opened last; with `sessionIds`, only folders one of those sessions works in (a person's own). */
export async function listRecentWorkspaces(db: Db, limit = 10, sessionIds?: Set<string>) {
  const where = sessionIds ? { sessions: { some: { id: { in: [...sessionIds] } } } } : {};
  return db.workspace.findMany({ where, orderBy: { lastOpenedAt: "desc" }, take: limit });
}
