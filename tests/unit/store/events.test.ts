import { describe, expect, it } from "vitest";
import { createSession, insertEvents, readEvents, type Db } from "../../../server/store";
import { useStoreDb } from "./store-db";

describe("store: readEvents", () => {
  let db: Db;
  useStoreDb("wl-store-events-", (opened) => (db = opened));

  it("reads what findMany reads (after a seq, in order, limited), only of the session", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-ev-a" });
    const other = await createSession(db, { workspace: "/tmp/wl-ev-b" });
    const at = new Date("2026-01-02T03:04:05.678Z");
    const event = (sessionId: string, seq: number) => ({
      sessionId,
      seq,
      type: "notice",
      payload: JSON.stringify({ text: `é ${seq}` }),
      turnId: seq % 2 ? "t1" : null,
      createdAt: at,
    });
    // Out of order, interleaved with another session.
    await insertEvents(
      db,
      [5, 1, 3, 2, 4].flatMap((seq) => [event(session.id, seq), event(other.id, seq)]),
    );
    for (const [afterSeq, limit] of [
      [0, undefined],
      [2, undefined],
      [0, 2],
      [5, undefined],
      [1, 1000],
    ] as const) {
      const expected = await db.event.findMany({
        where: { sessionId: session.id, seq: { gt: afterSeq } },
        orderBy: { seq: "asc" },
        take: limit,
      });
      expect(await readEvents(db, session.id, afterSeq, limit)).toStrictEqual(expected);
    }
    expect((await readEvents(db, session.id, 0)).map((row) => row.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await readEvents(db, session.id, 0))[0].createdAt).toEqual(at);
  });

  it("insertEvents stores what createMany stores, fenced (raw) or not, atomically, also past one statement's rows", async () => {
    const viaPrisma = await createSession(db, { workspace: "/tmp/wl-ev-c" });
    const viaStore = await createSession(db, { workspace: "/tmp/wl-ev-c" });
    const batch = (sessionId: string, count: number, from = 1) =>
      Array.from({ length: count }, (_, i) => ({
        sessionId,
        seq: from + i,
        type: i % 3 ? "message.part.delta" : "turn.started",
        payload: JSON.stringify({ delta: `"quoted" \\ ${"x".repeat(i % 7)} ✓`, i }),
        turnId: i % 2 ? `turn_${i}` : null,
        createdAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, i % 1000)),
      }));
    await db.event.createMany({ data: batch(viaPrisma.id, 1_201) });
    // A turn's events take the fenced (raw) statement: it must store what createMany stores.
    await insertEvents(db, batch(viaStore.id, 1_201), { sessionId: viaStore.id, epoch: 0 });
    const strip = (rows: { id: number; sessionId: string }[]) =>
      rows.map(({ id: _id, sessionId: _sessionId, ...row }) => row);
    const expected = strip(await db.event.findMany({ where: { sessionId: viaPrisma.id }, orderBy: { seq: "asc" } }));
    expect(
      strip(await db.event.findMany({ where: { sessionId: viaStore.id }, orderBy: { seq: "asc" } })),
    ).toStrictEqual(expected);
    // The stored text of the dates too (other queries compare and order by it).
    const text = (sessionId: string) =>
      db.$queryRaw<
        { c: string }[]
      >`SELECT "createdAt" || '' AS c FROM "Event" WHERE "sessionId" = ${sessionId} ORDER BY "seq" LIMIT 3`;
    expect(await text(viaStore.id)).toEqual(await text(viaPrisma.id));

    // A duplicate seq anywhere fails the whole batch, in one statement or several.
    for (const count of [3, 1_100])
      for (const fenced of [false, true]) {
        const session = await createSession(db, { workspace: "/tmp/wl-ev-d" });
        const claim = fenced ? { sessionId: session.id, epoch: 0 } : undefined;
        await insertEvents(db, batch(session.id, 1, count));
        await expect(insertEvents(db, batch(session.id, count), claim)).rejects.toThrow();
        expect(await db.event.count({ where: { sessionId: session.id } })).toBe(1);
      }
  });
});
