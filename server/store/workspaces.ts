import path from "node:path";
import type { Db } from "./db";

export async function upsertWorkspace(db: Db, workspacePath: string) {
  return db.workspace.upsert({
    where: { path: workspacePath },
    create: { path: workspacePath, name: path.basename(workspacePath) || workspacePath },
    update: { lastOpenedAt: new Date() },
  });
}

export async function listRecentWorkspaces(db: Db, limit = 10) {
  return db.workspace.findMany({ orderBy: { lastOpenedAt: "desc" }, take: limit });
}
