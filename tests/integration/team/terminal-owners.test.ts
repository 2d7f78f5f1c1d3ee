import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../server/config";
import { startBridge, type Bridge } from "../../../server/main";
import { Redis } from "ioredis";
import { OwnerLease } from "../../../server/leases";
import type { Ack } from "../../../server/protocol";
import { dropTestDatabases, TEST_POSTGRES, testDatabaseUrl } from "../../db";
import { uniqueId } from "../helpers";
import { waitFor } from "../../support/wait";
import { PtyViewer } from "../pty/pty-client";

/**
 * Team mode: a tab on bridge B types into a terminal that runs on bridge A. B remembers A as the
 * terminal's owner, so a keystroke is one Redis publish (no registry read, no lease query), and
 * forgets it when A announces that the terminal ended.
 */
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const TOKEN = "owners-token-0123456789abcdef";

let a: Bridge;
let b: Bridge;
let workspace: string;
const sockets: Socket[] = [];

function socketOn(bridge: Bridge): Socket {
  const socket = io(bridge.url, { auth: { token: TOKEN }, transports: ["websocket"], forceNew: true });
  sockets.push(socket);
  return socket;
}

async function command<T>(socket: Socket, name: string, payload: Record<string, unknown>): Promise<T> {
  const ack = (await socket.timeout(15_000).emitWithAck(name, { commandId: uniqueId(), ...payload })) as Ack<T>;
  if (!ack.ok) throw new Error(`${name}: ${ack.error.code} ${ack.error.message}`);
  return ack.data;
}

// Team mode is PostgreSQL + Redis: it runs in the PostgreSQL pass (package.json, test:integration:postgres).
describe.skipIf(!TEST_POSTGRES)("which bridge owns a terminal, remembered (PostgreSQL + Redis)", () => {
  beforeAll(async () => {
    const shared = await fs.mkdtemp(path.join(os.tmpdir(), "wl-owners-db-"));
    workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-owners-ws-")));
    const prefix = `wlt-${randomUUID()}`;
    const bridges: Bridge[] = [];
    for (const name of ["a", "b"]) {
      const home = await fs.mkdtemp(path.join(os.tmpdir(), `wl-owners-${name}-`));
      const config = loadConfig({
        PORT: "0",
        WORLDLINE_HOME: home,
        WORLDLINE_TOKEN: TOKEN,
        DATABASE_URL: testDatabaseUrl(shared),
        REDIS_URL,
        WORLDLINE_REDIS_PREFIX: prefix,
      });
      bridges.push(await startBridge({ config, ui: false }));
    }
    [a, b] = bridges;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect();
    await b?.close();
    await a?.close();
    await dropTestDatabases();
  });

  /**
   * A terminal opened on A, once B has heard A announce it: a lookup that an announcement overtakes
   * is not remembered, so under load B's first lookup could otherwise be left uncached.
   */
  async function terminalOnA(sessionId: string): Promise<string> {
    const heard = b.services.terminals.owners?.since() ?? 0;
    const { terminalId } = await command<{ terminalId: string }>(socketOn(a), "pty.create", {
      sessionId,
      cols: 80,
      rows: 24,
    });
    await waitFor(() => (b.services.terminals.owners?.since() ?? 0) > heard, 10_000, "B to hear A open the terminal");
    return terminalId;
  }

  async function newSession(): Promise<string> {
    const response = await fetch(`${a.url}/api/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ workspace, yolo: true }),
    });
    return ((await response.json()) as { id: string }).id;
  }

  it("types from B into A's terminal without a registry read or a lease query per keystroke", async () => {
    const sessionId = await newSession();
    const owners = b.services.terminals.owners;
    const terminalId = await terminalOnA(sessionId);
    const viewer = new PtyViewer(socketOn(b), sessionId, terminalId, { xterm: false });
    await viewer.attach();
    expect(owners?.cached(sessionId, terminalId)).toEqual(expect.any(String));

    // Only B would look the owner up (A types into its own terminal): any call here is B's.
    const leaseQueries = vi.spyOn(OwnerLease.prototype, "isLive");
    const registryReads = vi.spyOn(Redis.prototype, "hget");
    for (const key of "echo typed-from-b") viewer.input(key);
    viewer.input("\r");
    await waitFor(() => viewer.text().includes("typed-from-b\r\n"), 20_000, "the echo of B's keystrokes");
    expect(leaseQueries).not.toHaveBeenCalled();
    expect(registryReads).not.toHaveBeenCalled();
    leaseQueries.mockRestore();
    registryReads.mockRestore();
    viewer.dispose();
  });

  it("forgets the owner when the terminal ends, and a later keystroke finds it gone", async () => {
    const sessionId = await newSession();
    const terminalId = await terminalOnA(sessionId);
    const kept = await terminalOnA(sessionId);
    const owners = b.services.terminals.owners;
    const socket = socketOn(b);
    for (const id of [terminalId, kept]) await new PtyViewer(socket, sessionId, id, { xterm: false }).attach();
    const owner = owners?.cached(sessionId, terminalId);
    expect(owner).toEqual(expect.any(String));

    await command(socketOn(a), "pty.close", { sessionId, terminalId });
    await waitFor(() => owners?.cached(sessionId, terminalId) === undefined, 10_000, "B to forget the ended terminal");
    expect(owners?.cached(sessionId, kept)).toBe(owner);

    // The next keystroke asks the registry again, finds nothing and remembers nothing.
    const registryReads = vi.spyOn(Redis.prototype, "hget");
    b.services.terminals.input(sessionId, terminalId, "late-viewer", "x");
    await waitFor(() => registryReads.mock.calls.length > 0, 5_000, "a registry read for the unknown terminal");
    await registryReads.mock.results[0].value;
    expect(owners?.cached(sessionId, terminalId)).toBeUndefined();
    registryReads.mockRestore();
  });
});
