import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, getSession, openDb, updateSession, type Db } from "../../../server/store";
import { dropTestDatabases, testDatabaseUrl } from "../../db";

describe("store: getSession", () => {
  let db: Db;
  let home: string;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-store-sessions-"));
    ({ db } = await openDb(home, testDatabaseUrl(home)));
  });

  afterAll(async () => {
    await db.$disconnect();
    await dropTestDatabases();
    fs.rmSync(home, { recursive: true, force: true });
  });

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
