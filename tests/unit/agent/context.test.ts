import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Context, type HistoryRecord } from "../../../server/agent/context";
import { appendHistory, createSession, openDb, readHistory, type Db } from "../../../server/store";

const user = (content: string): HistoryRecord => ({ kind: "message", message: { role: "user", content } });
const marker = (number: number): HistoryRecord => ({ kind: "checkpoint", checkpointId: `cp_${number}`, number });

describe("Context: staged records", () => {
  let db: Db;
  let home: string;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-context-"));
    ({ db } = await openDb(home));
  });

  afterAll(async () => {
    await db.$disconnect();
    fs.rmSync(home, { recursive: true, force: true });
  });

  async function stored(sessionId: string) {
    return (await readHistory(db, sessionId)).map((row) => [row.position, JSON.parse(row.data) as HistoryRecord]);
  }

  it("are visible at once, written in position order by flush/save/append, and restored exactly", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-ctx" });
    const context = await Context.load(db, session.id);
    context.stage(marker(0), user("hello"));
    expect(context.messages()).toEqual([{ role: "user", content: "hello" }]);
    expect(await stored(session.id)).toEqual([]);
    context.flush();
    context.stage(marker(1));
    await context.append(user("again"));
    expect(await stored(session.id)).toEqual([
      [0, marker(0)],
      [1, user("hello")],
      [2, marker(1)],
      [3, user("again")],
    ]);
    expect((await Context.load(db, session.id)).all()).toEqual(context.all());
  });

  it("a truncate drops staged records past the cut and keeps the ones before it", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-ctx" });
    const context = await Context.load(db, session.id);
    await context.append(user("one"));
    context.stage(marker(0), user("two"), user("three"));
    await context.truncate(2);
    await context.save();
    expect(await stored(session.id)).toEqual([
      [0, user("one")],
      [1, marker(0)],
    ]);
    expect(context.length).toBe(2);
  });

  it("a failed background write is reported by the next save and kept for the one after, never dropped", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-ctx" });
    const context = await Context.load(db, session.id);
    // Another writer appends position 0 first: this context's batch no longer continues the stored history.
    await db.historyEntry.create({ data: { sessionId: session.id, position: 0, kind: "message", data: "{}" } });
    context.stage(user("kept"));
    context.flush();
    await expect(context.save()).rejects.toThrow(/changed under this writer/);
    // The record is still unsaved: the next save tries it again (and fails the same way), it is not skipped.
    await expect(context.save()).rejects.toThrow(/changed under this writer/);
    await db.historyEntry.deleteMany({ where: { sessionId: session.id } });
    await expect(context.save()).resolves.toBeUndefined();
    expect((await readHistory(db, session.id)).map((row) => row.position)).toEqual([0]);
  });

  it("positions stay gap-free: a retried batch that went through is not written twice", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-ctx" });
    const batch = [
      { position: 0, kind: "message", data: "{}" },
      { position: 1, kind: "message", data: "{}" },
    ];
    await appendHistory(db, session.id, batch);
    await appendHistory(db, session.id, batch); // the answer of the first was lost: the retry finds it stored
    await expect(appendHistory(db, session.id, [{ position: 3, kind: "message", data: "{}" }])).rejects.toThrow(
      /changed under this writer/,
    );
    expect((await readHistory(db, session.id)).map((row) => row.position)).toEqual([0, 1]);
  });
});
