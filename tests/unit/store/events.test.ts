import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, insertEvents, openDb, readEvents, type Db } from "../../../server/store";

describe("store: readEvents", () => {
  let db: Db;
  let home: string;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-store-events-"));
    ({ db } = await openDb(home));
  });

  afterAll(async () => {
    await db.$disconnect();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it("reads what findMany reads (after a seq, in order, limited), only of the session", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-ev-a" });
    const other = await createSession(db, { workspace: "/tmp/wl-ev-b" });
    const at = new Date("2026-01-02T03:04:05.678Z");
    const event = (sessionId: string, seq: number) => ({ sessionId, seq, type: "notice", payload: JSON.stringify({ text: `é ${seq}` }), turnId: seq % 2 ? "t1" : null, createdAt: at });
    // Out of order, interleaved with another session.
    await insertEvents(db, [5, 1, 3, 2, 4].flatMap((seq) => [event(session.id, seq), event(other.id, seq)]));
    for (const [afterSeq, limit] of [[0, undefined], [2, undefined], [0, 2], [5, undefined], [1, 1000]] as const) {
      const expected = await db.event.findMany({ where: { sessionId: session.id, seq: { gt: afterSeq } }, orderBy: { seq: "asc" }, take: limit });
      expect(await readEvents(db, session.id, afterSeq, limit)).toStrictEqual(expected);
    }
    expect((await readEvents(db, session.id, 0)).map((row) => row.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await readEvents(db, session.id, 0))[0].createdAt).toEqual(at);
  });
});
