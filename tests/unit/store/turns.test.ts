import { describe, expect, it } from "vitest";
import { createSession, createTurn, getTurn, providerOf, type Db } from "../../../server/store";
import { useStoreDb } from "./store-db";

describe("store: createTurn", () => {
  let db: Db;
  useStoreDb("wl-store-turns-", (opened) => (db = opened));

  it("numbers turns after the session's last one, also when created at once or by another writer", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-turns" });
    const other = await createSession(db, { workspace: "/tmp/wl-turns" });
    expect((await createTurn(db, session.id, "one")).number).toBe(1);
    await db.turn.create({ data: { sessionId: session.id, prompt: "another process", number: 2 } });
    const together = await Promise.all([
      createTurn(db, session.id, "a"),
      createTurn(db, session.id, "b"),
      createTurn(db, other.id, "c"),
    ]);
    expect(together.map((turn) => turn.number)).toEqual([3, 4, 1]);
    await expect(createTurn(db, "no-such-session", "x")).rejects.toThrow();
  });

  it("returns what is stored, in the shape and types Prisma's create returns", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-turns" });
    const turn = await createTurn(db, session.id, "Ünïcode ✓ 'quoted'");
    expect(await getTurn(db, turn.id)).toStrictEqual(turn);
    const viaPrisma = await db.turn.create({ data: { sessionId: session.id, prompt: "p", number: 99 } });
    expect(Object.keys(turn).sort()).toEqual(Object.keys(viaPrisma).sort());
    expect(turn.id).toMatch(/^c[0-9a-z]{24}$/);
    expect(viaPrisma.id).toMatch(/^c[0-9a-z]{24}$/);
    // SQLite keeps dates as text: stored as Prisma stores it (other queries compare and order by the text).
    if (providerOf(db) !== "sqlite") return;
    const text = await db.$queryRaw<
      { a: string; b: string }[]
    >`SELECT t1."startedAt" || '' AS a, t2."startedAt" || '' AS b FROM "Turn" t1, "Turn" t2 WHERE t1."id" = ${turn.id} AND t2."id" = ${viaPrisma.id}`;
    expect(text[0].a).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
    expect(text[0].b).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/);
  });
});
