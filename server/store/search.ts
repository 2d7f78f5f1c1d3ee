import type { Db } from "./db";

/** Sessions whose title or any event payload contains `text` (SQLite LIKE: ASCII case-insensitive). */
export async function searchSessionIds(db: Db, text: string, limit = 200): Promise<string[]> {
  const byTitle = await db.session.findMany({
    where: { title: { contains: text } },
    select: { id: true },
    take: limit,
  });
  const byContent = await db.event.findMany({
    where: { payload: { contains: text }, type: { in: ["message.user", "message.part.delta", "turn.started"] } },
    distinct: ["sessionId"],
    select: { sessionId: true },
    take: limit,
  });
  return [...new Set([...byTitle.map((s) => s.id), ...byContent.map((e) => e.sessionId)])];
}
