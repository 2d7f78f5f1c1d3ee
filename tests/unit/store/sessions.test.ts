import { describe, expect, it } from "vitest";
import {
  createSession,
  getSession,
  insertEvents,
  searchSessionIds,
  updateSession,
  type Db,
} from "../../../server/store";
import { useStoreDb } from "./store-db";

describe("store: getSession", () => {
  let db: Db;
  useStoreDb("wl-store-sessions-", (opened) => (db = opened));

  it("reads a session with its workspace, and null for none", async () => {
    const parent = await createSession(db, { workspace: "/tmp/wl-a" });
    const child = await createSession(db, {
      workspace: "/tmp/wl-b",
      yolo: true,
      title: "Ünïcode ✓",
      model: "m-1",
      parentId: parent.id,
      agentCommand: "agent --acp",
    });
    await updateSession(db, child.id, { archived: true, status: "running", todos: '[{"title":"x","status":"done"}]' });
    for (const [id, path] of [
      [parent.id, "/tmp/wl-a"],
      [child.id, "/tmp/wl-b"],
    ]) {
      const row = await getSession(db, id);
      // Raw SQL, read exactly as Prisma's include reads it (every column, the same types).
      expect(row).toStrictEqual(await db.session.findUnique({ where: { id }, include: { workspace: true } }));
      expect(row?.workspace).toMatchObject({ id: row?.workspaceId, path });
      expect(row?.createdAt).toBeInstanceOf(Date);
      expect(row?.workspace.lastOpenedAt).toBeInstanceOf(Date);
    }
    expect(await getSession(db, child.id)).toMatchObject({
      yolo: true,
      title: "Ünïcode ✓",
      archived: true,
      status: "running",
      parentId: parent.id,
    });
    expect(await getSession(db, "nope")).toBeNull();
  });
});

describe("store: searchSessionIds", () => {
  let db: Db;
  useStoreDb("wl-store-search-", (opened) => (db = opened));

  it("finds a session by its title or a prompt's text, ignoring case on both databases", async () => {
    const byTitle = await createSession(db, { workspace: "/tmp/wl-s1", title: "Fix the Flaky Checkout" });
    const byPrompt = await createSession(db, { workspace: "/tmp/wl-s2", title: "other" });
    const unrelated = await createSession(db, { workspace: "/tmp/wl-s3", title: "nothing here" });
    const event = (sessionId: string, seq: number, type: string, text: string) => ({
      sessionId,
      seq,
      type,
      payload: JSON.stringify({ text }),
      turnId: null,
      createdAt: new Date(),
    });
    await insertEvents(db, [
      event(byPrompt.id, 1, "message.user", "Please look at the FLAKY test"),
      // Only prompts and the model's text are searched, not every event.
      event(unrelated.id, 1, "notice", "flaky"),
    ]);
    expect((await searchSessionIds(db, "flaky")).sort()).toEqual([byTitle.id, byPrompt.id].sort());
    expect(await searchSessionIds(db, "CHECKOUT")).toEqual([byTitle.id]);
    expect(await searchSessionIds(db, "absent")).toEqual([]);
  });
});

describe("store: text with NUL characters", () => {
  let db: Db;
  useStoreDb("wl-store-nul-", (opened) => (db = opened));

  it("stores a title with U+0000 (U+FFFD in its place on PostgreSQL) and finds no session by an id holding one", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-nul", title: "a\0b" });
    const stored = (await getSession(db, session.id))?.title;
    expect(stored).toBe(process.env.WORLDLINE_TEST_POSTGRES ? "a\uFFFDb" : "a\0b");
    expect(await getSession(db, `${session.id}\0`)).toBeNull();
    // In a transaction too: its statements pass through the same adapter.
    await db.$transaction(async (tx) => {
      await tx.session.update({ where: { id: session.id }, data: { title: "c\0d" } });
    });
    expect((await getSession(db, session.id))?.title).toBe(process.env.WORLDLINE_TEST_POSTGRES ? "c\uFFFDd" : "c\0d");
  });
});
