import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBridgeRecord } from "../../../server/cli/bridge-record";
import { TEST_POSTGRES } from "../../db";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const run = promisify(execFile);

/**
 * `worldline users` on the machine of a running hub on SQLite (SECURITY.md, "What a member's session
 * reaches"): it asks the hub over its API instead of opening the hub's database file. The hub sees the
 * change at once (a disabled person's socket closes), and its database files stay its own.
 */
describe.skipIf(TEST_POSTGRES)("worldline users beside a running hub", () => {
  let hub: TestBridge;
  let removeRecord: () => void;
  let socket: Socket | undefined;

  function users(...args: string[]) {
    const env: NodeJS.ProcessEnv = { ...process.env, WORLDLINE_HOME: hub.home };
    delete env.DATABASE_URL;
    delete env.WORLDLINE_TOKEN;
    return run(process.execPath, ["--import", "tsx", "server/cli/index.ts", "users", ...args], { cwd: ROOT, env });
  }

  beforeAll(async () => {
    hub = await startTestBridge();
    removeRecord = writeBridgeRecord(hub.home, {
      pid: process.pid,
      url: hub.url,
      host: "127.0.0.1",
      port: hub.port,
      token: hub.token,
      version: "0.0.0-test",
    });
  });

  afterAll(async () => {
    socket?.disconnect();
    removeRecord?.();
    await hub?.stop();
  });

  it("disables a person through the hub: their open socket closes, their token stops, and the hub's WAL is untouched", async () => {
    const { user } = await hub.services.people.addUser({ name: "ann", role: "member", password: "ann-password-1" });
    const { token } = await hub.services.people.createApiToken(user.id, { name: "test" });
    const open = io(hub.url, { auth: { token }, transports: ["websocket"], forceNew: true, reconnection: false });
    socket = open;
    await new Promise<void>((resolve, reject) => {
      open.once("connect", () => resolve());
      open.once("connect_error", reject);
    });
    const closed = new Promise<void>((resolve) => open.once("disconnect", () => resolve()));
    const wal = path.join(hub.home, "worldline.db-wal");
    const walBefore = (await fs.stat(wal)).ino;

    const disabled = await users("disable", "ann");
    expect(disabled.stdout).toContain("ann is disabled.");
    // Within the 2 s a credential's end has to reach its sockets: only the hub itself raises that signal.
    await Promise.race([
      closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error("ann's socket is still open after 2 s")), 2_000)),
    ]);
    const refused = await fetch(`${hub.url}/api/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(401);
    expect((await users("list")).stdout).toMatch(/^ann\tmember\tdisabled$/m);

    // The hub's write-ahead log is the file it opened, and the hub still writes through it.
    expect((await fs.stat(wal)).ino).toBe(walBefore);
    await hub.services.people.addUser({ name: "ben", role: "viewer", password: "ben-password-1" });
    await waitFor(async () => /^ben\tviewer$/m.test((await users("list")).stdout), 10_000, "ben in the CLI's list");
  }, 60_000);
});
