import type { Db } from "./db";

export interface MemoryRow {
  id: string;
  text: string;
  type: string;
  scope: string;
  /** The workspace's path (rows keep the Workspace id; lookups translate). */
  workspace: string | null;
  sessionId: string | null;
  importance: number;
  source: string;
  /** The person it belongs to; null on a bridge without people (or the launch token's). */
  ownerId: string | null;
  createdAt: Date;
}

export interface NewMemory {
  text: string;
  type: string;
  scope: string;
  workspace?: string;
  sessionId?: string;
  importance: number;
  source: string;
  ownerId?: string | null;
}

/** Candidates for ranking are read in pages of at most this many, newest first. */
const MAX_MEMORY_ROWS = 2000;

/**
 * Workspace ids by path and paths by id, per database. Workspace rows are never deleted and
 * their paths never change, so what was found once stays true; a turn's recall (on the way to
 * its first token) is then one query instead of two or three.
 */
const workspaceKeys = new WeakMap<Db, { ids: Map<string, string>; paths: Map<string, string> }>();

function keysOf(db: Db) {
  let keys = workspaceKeys.get(db);
  if (!keys) workspaceKeys.set(db, (keys = { ids: new Map(), paths: new Map() }));
  return keys;
}

function rememberWorkspace(db: Db, row: { id: string; path: string }): void {
  const keys = keysOf(db);
  keys.ids.set(row.path, row.id);
  keys.paths.set(row.id, row.path);
}

export async function createMemory(db: Db, memory: NewMemory): Promise<MemoryRow> {
  const workspace = memory.workspace
    ? await db.workspace.upsert({
        where: { path: memory.workspace },
        create: {
          path: memory.workspace,
          name: memory.workspace.split(/[\\/]/).filter(Boolean).pop() ?? memory.workspace,
        },
        update: {},
      })
    : null;
  if (workspace) rememberWorkspace(db, workspace);
  const row = await db.memory.create({
    data: {
      text: memory.text,
      type: memory.type,
      scope: memory.scope,
      workspaceId: workspace?.id ?? null,
      sessionId: memory.sessionId ?? null,
      importance: memory.importance,
      source: memory.source,
      ownerId: memory.ownerId ?? null,
    },
  });
  return { ...row, workspace: workspace?.path ?? null };
}

/**
 * Memories matching the filters, newest first. `visibleTo` selects what a turn may
 * recall: the owner's global memories, the workspace's and the session's own (all of
 * the owner's; null is the bridge without people). `readableBy` is what a person may
 * list: their own, and the session memories of the sessions they see (null: all sessions).
 */
export async function listMemories(
  db: Db,
  filter: {
    scope?: string;
    type?: string;
    workspace?: string;
    sessionId?: string;
    visibleTo?: { workspace: string; sessionId: string; ownerId: string | null };
    readableBy?: { ownerId: string; sessionIds: Set<string> | null };
    limit?: number;
  } = {},
): Promise<MemoryRow[]> {
  const keys = keysOf(db);
  const workspaceIds = keys.ids;
  const wanted = [filter.workspace, filter.visibleTo?.workspace].filter(
    (w): w is string => Boolean(w) && !workspaceIds.has(w!),
  );
  for (const row of wanted.length ? await db.workspace.findMany({ where: { path: { in: wanted } } }) : [])
    rememberWorkspace(db, row);
  const where: Record<string, unknown> = {};
  if (filter.scope) where.scope = filter.scope;
  if (filter.type) where.type = filter.type;
  if (filter.workspace) where.workspaceId = workspaceIds.get(filter.workspace) ?? "-";
  if (filter.sessionId) where.sessionId = filter.sessionId;
  const and: Record<string, unknown>[] = [];
  if (filter.visibleTo) {
    where.ownerId = filter.visibleTo.ownerId;
    and.push({
      OR: [
        { scope: "global" },
        { scope: "workspace", workspaceId: workspaceIds.get(filter.visibleTo.workspace) ?? "-" },
        { scope: "session", sessionId: filter.visibleTo.sessionId },
      ],
    });
  }
  if (filter.readableBy) {
    const { ownerId, sessionIds } = filter.readableBy;
    const sessions = sessionIds === null ? { not: null } : { in: [...sessionIds] };
    and.push({ OR: [{ ownerId }, { scope: "session", sessionId: sessions }] });
  }
  if (and.length > 0) where.AND = and;
  const take = Math.min(filter.limit ?? MAX_MEMORY_ROWS, MAX_MEMORY_ROWS);
  const rows = await db.memory.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take });
  const ids = [
    ...new Set(rows.map((row) => row.workspaceId).filter((id): id is string => Boolean(id) && !keys.paths.has(id!))),
  ];
  for (const row of ids.length ? await db.workspace.findMany({ where: { id: { in: ids } } }) : [])
    rememberWorkspace(db, row);
  return rows.map(({ workspaceId, ...row }) => ({
    ...row,
    workspace: workspaceId ? (keys.paths.get(workspaceId) ?? null) : null,
  }));
}

/** A memory's row (null: no such memory), for checking whose it is before a delete. */
export async function findMemory(db: Db, id: string): Promise<{ ownerId: string | null } | null> {
  return db.memory.findUnique({ where: { id }, select: { ownerId: true } });
}

/** True when a row was deleted. */
export async function deleteMemory(db: Db, id: string): Promise<boolean> {
  const { count } = await db.memory.deleteMany({ where: { id } });
  return count > 0;
}
