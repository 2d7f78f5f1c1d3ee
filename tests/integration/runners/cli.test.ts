import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBridgeRecord } from "../../../server/cli/bridge-record";
import { testDatabaseUrl } from "../../db";
import { startTestBridge, type TestBridge } from "../helpers";
import { startRunner, tempDir, type RunnerProcess } from "./support";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const run = promisify(execFile);

/** `worldline runners add|list|rename|revoke` on the hub's machine, against a running hub sharing its data. */
describe("worldline runners", () => {
  let hub: TestBridge;
  let home: string;
  const started: RunnerProcess[] = [];

  function cli(...args: string[]) {
    return run(process.execPath, ["--import", "tsx", "server/cli/index.ts", "runners", ...args], {
      cwd: ROOT,
      env: { ...process.env, WORLDLINE_HOME: home, DATABASE_URL: testDatabaseUrl(home) },
    });
  }

  beforeAll(async () => {
    home = await tempDir("wl-runners-cli-home-");
    hub = await startTestBridge({ home });
  });

  afterAll(async () => {
    for (const runner of started) runner.child.kill("SIGKILL");
    await hub?.stop();
  });

  it("adds a runner whose token is the last line, lists it, renames it (it reconnects under the new name), and a revoke drops its connection", async () => {
    const added = await cli("add", "devbox");
    const token = added.stdout.trim().split("\n").at(-1)!;
    expect(token).toMatch(/^wlr_enroll_[A-Za-z0-9_-]{43}$/);
    await expect(cli("add", "bad name!")).rejects.toMatchObject({ code: 1 });

    const root = await tempDir("wl-runners-cli-root-");
    const runner = startRunner({ hub: hub.url, token, home: await tempDir("wl-runners-cli-rhome-"), roots: [root] });
    started.push(runner);
    await runner.connected();
    expect(runner.stdout()).toContain(`Worldline runner devbox connected to ${hub.url}`);

    await cli("add", "idle");
    // Name, connected or offline, last seen, roots: from last_seen (no bridge of this home answers) …
    const rows = (stdout: string) =>
      stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split("\t"));
    const listed = rows((await cli("list")).stdout);
    expect(listed.find((row) => row[0] === "devbox")).toEqual(["devbox", "connected", expect.any(String), root]);
    expect(listed.find((row) => row[0] === "idle")).toEqual(["idle", "offline", "never seen", ""]);
    // … and from the running bridge's own answer when it has a record in this home.
    const removeRecord = writeBridgeRecord(home, {
      pid: process.pid,
      url: hub.url,
      host: "127.0.0.1",
      port: hub.port,
      token: hub.token,
      version: "0.0.0-test",
    });
    try {
      const asked = rows((await cli("list")).stdout);
      expect(asked.map((row) => row.slice(0, 2))).toEqual([
        ["devbox", "connected"],
        ["idle", "offline"],
      ]);
    } finally {
      removeRecord();
    }
    await cli("revoke", "idle");

    // Renamed from another process: the hub drops the old name within its check; the runner comes back as the new one.
    const renamed = await cli("rename", "devbox", "buildbox");
    expect(renamed.stdout).toContain('Runner "devbox" renamed to "buildbox".');
    await runner.connected(2);
    expect(runner.stdout()).toContain(`Worldline runner buildbox connected to ${hub.url}`);
    await expect(cli("rename", "devbox", "other")).rejects.toMatchObject({ code: 1 });

    const revoked = await cli("revoke", "buildbox");
    expect(revoked.stdout).toContain('Runner "buildbox" revoked.');
    // Revoked from another process: the hub notices within its revocation check and drops the runner.
    expect((await runner.exited).code).toBe(1);
    await expect(cli("revoke", "buildbox")).rejects.toMatchObject({ code: 1 });
    const list = (await (await hub.api("/api/v1/runners")).json()) as unknown[];
    expect(list).toEqual([]);
  }, 90_000);
});
