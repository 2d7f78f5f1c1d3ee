import { describe, expect, it } from "vitest";
import { createSession, getSession, updateSession, type Db } from "../../../server/store";
import { useStoreDb } from "./store-db";

describe("store: getSession", () => {
  let db: Db;
  useStoreDb("wl-store-sessions-", (opened) => (db = opened));

  it("reads exactly what Prisma's include reads (every column, the same types)", async () => {
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
    for (const id of [parent.id, child.id]) {
      const prisma = await db.session.findUnique({ where: { id }, include: { workspace: true } });
      const row = await getSession(db, id);
      expect(row).toStrictEqual(prisma);
      expect(row?.createdAt).toBeInstanceOf(Date);
      expect(row?.workspace.lastOpenedAt).toBeInstanceOf(Date);
    }
    expect((await getSession(db, child.id))?.yolo).toBe(true);
    expect(await getSession(db, "nope")).toBeNull();
  });
});
