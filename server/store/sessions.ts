import { FencedError, sessionEpoch } from "./claims";
import type { Db } from "./db";
import { Prisma } from "./generated/prisma/client";
import { upsertWorkspace } from "./workspaces";

/** A session nobody has named yet; its first prompt names it (server/titles). */
export const DEFAULT_SESSION_TITLE = "New session";

export type SessionRow = Prisma.SessionGetPayload<{ include: { workspace: true } }>;

/** A session row joined with its workspace's columns, prefixed `w_`. */
type JoinedSessionRow = Prisma.SessionModel & {
  w_path: string;
  w_name: string;
  w_createdAt: Date;
  w_lastOpenedAt: Date;
};

export async function createSession(
  db: Db,
  input: {
    workspace: string;
    yolo?: boolean;
    title?: string;
    model?: string | null;
    parentId?: string;
    forkCheckpointId?: string;
    agentCommand?: string;
    runner?: string | null;
  },
) {
  const workspace = await upsertWorkspace(db, input.workspace);
  return db.session.create({
    data: {
      workspaceId: workspace.id,
      yolo: input.yolo ?? false,
      title: input.title ?? DEFAULT_SESSION_TITLE,
      model: input.model ?? null,
      parentId: input.parentId,
      forkCheckpointId: input.forkCheckpointId,
      agentCommand: input.agentCommand,
      runner: input.runner ?? null,
    },
    include: { workspace: true },
  });
}

/** A session with its workspace. */
/**
 * A session with its workspace, in one query: Prisma reads an include with a second one, and
 * every prompt reads its session on the way to the first token (bench/README.md, "Raw SQL"). The
 * row has exactly the shape of `findUnique({ include: { workspace: true } })` (a test compares
 * them). Aliases are quoted: PostgreSQL folds bare ones to lower case.
 */
export async function getSession(db: Db, id: string): Promise<SessionRow | null> {
  const rows = await db.$queryRaw<JoinedSessionRow[]>`
    SELECT s.*, w."path" AS "w_path", w."name" AS "w_name", w."createdAt" AS "w_createdAt", w."lastOpenedAt" AS "w_lastOpenedAt"
    FROM "Session" s JOIN "Workspace" w ON w."id" = s."workspaceId"
    WHERE s."id" = ${id}`;
  const row = rows[0];
  if (!row) return null;
  const { w_path, w_name, w_createdAt, w_lastOpenedAt, ...session } = row;
  const workspace = {
    id: session.workspaceId,
    path: w_path,
    name: w_name,
    createdAt: w_createdAt,
    lastOpenedAt: w_lastOpenedAt,
  };
  return { ...session, workspace };
}

export async function listSessions(db: Db, options: { includeArchived?: boolean; limit?: number } = {}) {
  return db.session.findMany({
    where: options.includeArchived ? {} : { archived: false },
    include: { workspace: true },
    orderBy: { updatedAt: "desc" },
    take: options.limit ?? 200,
  });
}

/**
 * The session list's status (updatedAt too). With `claim`, only while the session is at the
 * claim's epoch: one UPDATE of the row itself, so on PostgreSQL a takeover in flight is waited for
 * and its new epoch seen, and a bridge whose turn lost its claim gets `session:fenced` instead of
 * overwriting the new holder's status. False when there is no such session.
 */
export async function setSessionStatus(
  db: Db,
  id: string,
  status: string,
  claim?: { epoch: number },
): Promise<boolean> {
  // Raw: written on every turn's way to its first token (bench/README.md, "Raw SQL").
  const atEpoch = claim ? Prisma.sql`AND "epoch" = ${claim.epoch}` : Prisma.empty;
  const count =
    await db.$executeRaw`UPDATE "Session" SET "status" = ${status}, "updatedAt" = ${new Date()} WHERE "id" = ${id} ${atEpoch}`;
  if (count > 0) return true;
  if (claim && (await sessionEpoch(db, id)) !== null) throw new FencedError(id, claim.epoch);
  return false;
}

export async function updateSession(
  db: Db,
  id: string,
  data: {
    title?: string;
    yolo?: boolean;
    model?: string | null;
    status?: string;
    archived?: boolean;
    todos?: string;
    mode?: string;
    budgetUsd?: number | null;
    budgetStepUsd?: number | null;
    budgetTokens?: number | null;
  },
) {
  return db.session.update({ where: { id }, data, include: { workspace: true } });
}

export async function deleteSession(db: Db, id: string) {
  await db.session.delete({ where: { id } });
}
