import type { Db } from "./db";
import { upsertWorkspace } from "./workspaces";

export type SessionRow = NonNullable<Awaited<ReturnType<typeof getSession>>>;

export async function createSession(
  db: Db,
  input: { workspace: string; yolo?: boolean; title?: string; model?: string | null; parentId?: string; forkCheckpointId?: string; agentCommand?: string },
) {
  const workspace = await upsertWorkspace(db, input.workspace);
  return db.session.create({
    data: {
      workspaceId: workspace.id,
      yolo: input.yolo ?? false,
      title: input.title ?? "New session",
      model: input.model ?? null,
      parentId: input.parentId,
      forkCheckpointId: input.forkCheckpointId,
      agentCommand: input.agentCommand,
    },
    include: { workspace: true },
  });
}

export async function getSession(db: Db, id: string) {
  return db.session.findUnique({ where: { id }, include: { workspace: true } });
}

export async function listSessions(db: Db, options: { includeArchived?: boolean; limit?: number } = {}) {
  return db.session.findMany({
    where: options.includeArchived ? {} : { archived: false },
    include: { workspace: true },
    orderBy: { updatedAt: "desc" },
    take: options.limit ?? 200,
  });
}

export async function updateSession(
  db: Db,
  id: string,
  data: { title?: string; yolo?: boolean; model?: string | null; status?: string; archived?: boolean; todos?: string },
) {
  return db.session.update({ where: { id }, data, include: { workspace: true } });
}

export async function deleteSession(db: Db, id: string) {
  await db.session.delete({ where: { id } });
}

/** Sessions left `running` by a bridge that died; the caller marks them interrupted. */
export async function listRunningSessions(db: Db) {
  return db.session.findMany({ where: { status: "running" }, select: { id: true } });
}
