import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDb, type Db } from "../../../server/store/db";
import { listCommands, recordCommand } from "../../../server/store/audit";
import { createShellTool, TaskRegistry } from "../../../server/tools";
import { fakeCtx, makeWorkspace } from "../../unit/tools/support";
import { testDatabaseUrl } from "../../db";

let env: Awaited<ReturnType<typeof makeWorkspace>>;
let db: Db;
beforeEach(async () => {
  env = await makeWorkspace();
  ({ db } = await openDb(env.root + "/home", testDatabaseUrl(env.root + "/home")));
});
afterEach(async () => {
  await db.$disconnect();
  await env.cleanup();
});

describe("audit store", () => {
  it("records shell runs through ctx.audit, redacted, newest first", async () => {
    const shell = createShellTool({ tasks: new TaskRegistry() });
    const ctx = fakeCtx(env.ws, { audit: (record) => recordCommand(db, { ...record, sessionId: "s1", turnId: "t1" }) });
    await shell.run({ command: "echo one" }, ctx);
    await shell.run({ command: "curl -H 'Authorization: Bearer abcdefghijklmnop' http://127.0.0.1:9/ || exit 7" }, ctx);
    const rows = await listCommands(db, { limit: 10 });
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      riskLevel: "medium",
      actionType: "network",
      approved: true,
      exitCode: 7,
      sessionId: "s1",
      turnId: "t1",
      cwd: env.ws,
    });
    expect(rows[0].command).toBe("curl -H 'Authorization: Bearer [REDACTED]' http://127.0.0.1:9/ || exit 7");
    expect(rows[1]).toMatchObject({ command: "echo one", riskLevel: "none", actionType: "read_only", exitCode: 0 });
  });

  it("redacts again on write, whatever the caller passed", async () => {
    await recordCommand(db, {
      command: "export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz123",
      cwd: "/w",
      riskLevel: "low",
      actionType: "read_only",
      approved: false,
    });
    const [row] = await listCommands(db);
    expect(row.command).not.toContain("sk-abcdefghijklmnopqrstuvwxyz123");
    expect(row).toMatchObject({ approved: false, exitCode: null });
  });

  it("limits the page size and filters by session", async () => {
    for (let i = 0; i < 5; i++)
      await recordCommand(db, {
        command: `echo ${i}`,
        cwd: "/w",
        riskLevel: "none",
        actionType: "read_only",
        approved: true,
        sessionId: i % 2 ? "odd" : "even",
      });
    expect(await listCommands(db, { limit: 2 })).toHaveLength(2);
    expect((await listCommands(db, { sessionId: "odd" })).map((r) => r.command)).toEqual(["echo 3", "echo 1"]);
  });
});
