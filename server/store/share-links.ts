import type { Db } from "./db";

export type ShareLinkRow = Awaited<ReturnType<typeof createShareLink>>;

export async function createShareLink(
  db: Db,
  data: { sessionId: string; tokenHash: string; scope: string; expiresAt: Date | null },
) {
  return db.shareLink.create({ data });
}

export async function findShareLinkByHash(db: Db, tokenHash: string) {
  return db.shareLink.findUnique({ where: { tokenHash } });
}

export async function listShareLinks(db: Db, sessionId: string) {
  return db.shareLink.findMany({ where: { sessionId }, orderBy: { createdAt: "desc" } });
}

/** Marks a link revoked (idempotent); null when no such link belongs to the session. */
export async function revokeShareLink(db: Db, sessionId: string, id: string) {
  const link = await db.shareLink.findFirst({ where: { id, sessionId } });
  if (!link) return null;
  if (link.revokedAt) return link;
  return db.shareLink.update({ where: { id }, data: { revokedAt: new Date() } });
}

/** The event at one seq, to check that a tab's last event is the one the log holds. */
export async function eventAt(db: Db, sessionId: string, seq: number) {
  return db.event.findFirst({ where: { sessionId, seq }, select: { seq: true, createdAt: true } });
}
