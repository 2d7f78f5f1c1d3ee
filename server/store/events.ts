import type { Db } from "./db";

export interface StoredEvent {
  sessionId: string;
  seq: number;
  type: string;
  payload: string;
  turnId: string | null;
  createdAt: Date;
}

/** Appends a batch in one transaction; (sessionId, seq) is unique, so a duplicate fails loudly. */
export async function insertEvents(db: Db, events: StoredEvent[]): Promise<void> {
  if (events.length === 0) return;
  await db.event.createMany({ data: events });
}

export async function readEvents(db: Db, sessionId: string, afterSeq: number, limit?: number) {
  return db.event.findMany({
    where: { sessionId, seq: { gt: afterSeq } },
    orderBy: { seq: "asc" },
    take: limit,
  });
}

export async function lastEventSeq(db: Db, sessionId: string): Promise<number> {
  const last = await db.event.findFirst({ where: { sessionId }, orderBy: { seq: "desc" }, select: { seq: true } });
  return last?.seq ?? 0;
}

export async function readTurnEvents(db: Db, turnId: string) {
  return db.event.findMany({ where: { turnId }, orderBy: { seq: "asc" } });
}
