import { describe, expect, it } from "vitest";
import { createMemory, createSession, listMemories, type Db } from "../../../server/store";
import { useStoreDb } from "./store-db";

describe("store: listMemories for a turn's recall", () => {
  let db: Db;
  useStoreDb("wl-store-memory-", (opened) => (db = opened));

  it("reads what the equivalent findMany reads, in the same order, with workspace paths", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-mem-a" });
    const other = await createSession(db, { workspace: "/tmp/wl-mem-b" });
    const add = (text: string, scope: string, extra: { workspace?: string; sessionId?: string } = {}) =>
      createMemory(db, { text, type: "fact", scope, importance: 3, source: "user", ...extra });
    await add("global one", "global");
    await add("global with a workspace", "global", { workspace: "/tmp/wl-mem-b" });
    await add("this workspace", "workspace", { workspace: "/tmp/wl-mem-a" });
    await add("other workspace", "workspace", { workspace: "/tmp/wl-mem-b" });
    await add("this session", "session", { workspace: "/tmp/wl-mem-a", sessionId: session.id });
    await add("other session", "session", { sessionId: other.id });
    for (let i = 0; i < 5; i++) await add(`global ${i}`, "global"); // same-millisecond rows: the id breaks ties

    const rows = await listMemories(db, { visibleTo: { workspace: "/tmp/wl-mem-a", sessionId: session.id } });
    const workspaceId = (await db.workspace.findUnique({ where: { path: "/tmp/wl-mem-a" } }))!.id;
    const expected = await db.memory.findMany({
      where: {
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
    expect(await listMemories(db, { visibleTo: { workspace: "/tmp/nowhere", sessionId: "none" } })).toHaveLength(7);
  });
});
