import type { Db } from "./db";
import { containsIgnoringCase } from "./dialect";

/** Sessions whose title or any event payload contains `text` (ignoring case, on both databases). */
export async function searchSessionIds(db: Db, text: string, limit = 200): Promise<string[]> {
  const byTitle = await db.session.findMany({
    where: { title: containsIgnoringCase(db, text) },
    select: { id: true },
    take: limit,
  });
  const byContent = await db.event.findMany({
    where: {
      payload: containsIgnoringCase(db, text),
      type: { in: ["message.user", "message.part.delta", "turn.started"] },
    },
    distinct: ["sessionId"],
    select: { sessionId: true },
    take: limit,
  });
  return [...new Set([...byTitle.map((s) => s.id), ...byContent.map((e) => e.sessionId)])];
}
