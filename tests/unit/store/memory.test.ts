import { describe, expect, it } from "vitest";
import { createMemory, createSession, listMemories, type Db } from "../../../server/store";
import { useStoreDb } from "./store-db";

describe("store: listMemories for a turn's recall", () => {
  let db: Db;
  useStoreDb("wl-store-memory-", (opened) => (db = opened));

  it("reads what the equivalent findMany reads, in the same order, with workspace paths", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-mem-a" });
    const other = await createSession(db, { workspace: "/tmp/wl-mem-b" });
    const add = (
      text: string,
      scope: string,
      extra: { workspace?: string; sessionId?: string; ownerId?: string } = {},
    ) => createMemory(db, { text, type: "fact", scope, importance: 3, source: "user", ...extra });
    await add("global one", "global");
    await add("global with a workspace", "global", { workspace: "/tmp/wl-mem-b" });
    await add("this workspace", "workspace", { workspace: "/tmp/wl-mem-a" });
    await add("other workspace", "workspace", { workspace: "/tmp/wl-mem-b" });
    await add("this session", "session", { workspace: "/tmp/wl-mem-a", sessionId: session.id });
    await add("other session", "session", { sessionId: other.id });
    for (let i = 0; i < 5; i++) await add(`global ${i}`, "global"); // same-millisecond rows: the id breaks ties
    await add("someone's global", "global", { ownerId: "someone" });
    await add("someone's in this workspace", "workspace", { workspace: "/tmp/wl-mem-a", ownerId: "someone" });

    const rows = await listMemories(db, {
      visibleTo: { workspace: "/tmp/wl-mem-a", sessionId: session.id, ownerId: null },
    });
    const workspaceId = (await db.workspace.findUnique({ where: { path: "/tmp/wl-mem-a" } }))!.id;
    const expected = await db.memory.findMany({
      where: {
        ownerId: null,
        OR: [{ scope: "global" }, { scope: "workspace", workspaceId }, { scope: "session", sessionId: session.id }],
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    });
    const paths = new Map((await db.workspace.findMany()).map((w) => [w.id, w.path]));
    expect(rows).toStrictEqual(
      expected.map(({ workspaceId: id, ...row }) => ({ ...row, workspace: id ? (paths.get(id) ?? null) : null })),
    );
    expect(rows.map((row) => row.text)).not.toContain("other workspace");
    expect(rows.map((row) => row.text)).not.toContain("other session");
    expect(rows.find((row) => row.text === "global with a workspace")?.workspace).toBe("/tmp/wl-mem-b");
    expect(rows.map((row) => row.text)).not.toContain("someone's global");
    expect(
      await listMemories(db, { visibleTo: { workspace: "/tmp/nowhere", sessionId: "none", ownerId: null } }),
    ).toHaveLength(7);
  });

  it("a person's turn recalls only their own memories, and a person lists theirs and their sessions'", async () => {
    const mine = await createSession(db, { workspace: "/tmp/wl-mem-c" });
    const theirs = await createSession(db, { workspace: "/tmp/wl-mem-c" });
    const add = (text: string, scope: string, ownerId: string | null, sessionId?: string) =>
      createMemory(db, { text, type: "fact", scope, importance: 3, source: "user", ownerId, sessionId });
    await add("ann's global", "global", "ann");
    await add("ben's global", "global", "ben");
    await add("the bridge's global", "global", null);
    await add("ben's note on ann's session", "session", "ben", mine.id);
    await add("ben's own session", "session", "ben", theirs.id);
    const recalled = await listMemories(db, {
      visibleTo: { workspace: "/tmp/wl-mem-c", sessionId: mine.id, ownerId: "ann" },
    });
    expect(recalled.map((row) => row.text)).toEqual(["ann's global"]);
    const listed = await listMemories(db, { readableBy: { ownerId: "ann", sessionIds: new Set([mine.id]) } });
    expect(listed.map((row) => row.text).sort()).toEqual(["ann's global", "ben's note on ann's session"]);
  });
});
