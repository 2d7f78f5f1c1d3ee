import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ack } from "../../../server/protocol";
import { TEST_POSTGRES } from "../../db";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { waitFor } from "../../support/wait";
import { startChildBridge, type ChildBridge } from "../reliability/child-bridge";
import { uniqueId } from "../helpers";

/**
 * Team mode (PostgreSQL + Redis), two bridges: a turn on A waits on an approval, A is killed
 * with `kill -9`, B takes the turn over once A's lease has run out, the request stays pending on
 * B's pages all along, and allowing it on B finishes the same turn there.
 */
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const TOKEN = "alice-token-0123456789abcdef";

interface WireEvent {
  type: string;
  payload: Record<string, unknown>;
}
interface ApprovalWire {
  approval_id: string;
  task_id: string | null;
  status: string;
}

let fake: FakeLlm;
let database: string;
let workspace: string;
const bridges: ChildBridge[] = [];
const sockets: Socket[] = [];

function serverUrl(name: string): string {
  const url = new URL(TEST_POSTGRES!);
  url.pathname = `/${name}`;
  return url.toString();
}

async function start(env: Record<string, string>): Promise<ChildBridge> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-takeover-"));
  const bridge = await startChildBridge({ home, llmUrl: fake.url, env: { ...env, HOME: home } });
  bridges.push(bridge);
  return bridge;
}

async function api<T>(bridge: ChildBridge, pathname: string, body?: unknown): Promise<T> {
  const response = await fetch(`${bridge.url}${pathname}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function query<T>(sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: serverUrl(database) });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe.skipIf(!TEST_POSTGRES)("a waiting turn taken over by another bridge (PostgreSQL + Redis)", () => {
  beforeAll(async () => {
    fake = await startFakeLlm();
    database = `wlt_takeover_${randomUUID().replaceAll("-", "")}`;
    workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-takeover-ws-")));
    const env = {
      DATABASE_URL: serverUrl(database),
      REDIS_URL,
      WORLDLINE_REDIS_PREFIX: `wlt-${randomUUID()}`,
      WORLDLINE_TOKEN: TOKEN,
      // A dead bridge is judged so within seconds, not the default ten.
      WORLDLINE_LEASE_TTL_MS: "3000",
      WORLDLINE_HEARTBEAT_MS: "500",
    };
    // One at a time: the first creates and migrates the database.
    await start(env);
    await start(env);
  }, 120_000);

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect();
    for (const bridge of bridges) {
      if (bridge.child.exitCode === null && bridge.child.signalCode === null) {
        bridge.child.kill("SIGTERM");
        await bridge.exited;
      }
    }
    await fake?.close();
    if (!database) return;
    const client = new pg.Client({ connectionString: serverUrl("postgres") });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    await client.end();
  });

  it("stays pending on B through A's kill -9, and allowing it on B finishes the same turn", async () => {
    const [a, b] = bridges;
    const sessionId = (await api<{ id: string }>(a, "/api/v1/sessions", { workspace })).id;
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "taken-over.txt", content: "by B" } }] },
      { text: "Done on B." },
    );
    const socket = io(a.url, { auth: { token: TOKEN }, transports: ["websocket"], forceNew: true });
    sockets.push(socket);
    const ack = (await socket
      .timeout(15_000)
      .emitWithAck("turn.prompt", { commandId: uniqueId(), sessionId, text: "write it" })) as Ack<{ turnId: string }>;
    expect(ack.ok).toBe(true);
    const pendingOn = (bridge: ChildBridge) => api<ApprovalWire[]>(bridge, "/api/v1/approvals?status=pending");
    const [asked] = await waitFor(
      async () => ((await pendingOn(b)).length ? pendingOn(b) : undefined),
      20_000,
      "the request on B's pages",
    );
    await waitFor(
      async () =>
        (await query<{ runState: string | null }>(`SELECT "runState" FROM "Turn" WHERE "id" = '${asked.task_id}'`))[0]
          ?.runState,
      20_000,
      "the stored run state",
    );
    socket.disconnect();
    a.child.kill("SIGKILL");
    await a.exited;

    // B takes the turn over once A is judged dead; the request is pending on B all along.
    await waitFor(
      async () => {
        expect((await pendingOn(b)).map((row) => row.approval_id)).toEqual([asked.approval_id]);
        const events = await api<WireEvent[]>(b, `/api/v1/sessions/${sessionId}/events`);
        return events.some((event) => event.type === "notice" && /took the turn over/.test(String(event.payload.text)));
      },
      30_000,
      () => `B to take the turn over\n${b.stderr()}`,
    );
    const allowed = await api<{ status: string }>(b, `/api/v1/approvals/${asked.approval_id}`, {
      decision: "allow_once",
    });
    expect(allowed.status).toBe("approved");
    let seen: string[] = [];
    const completed = await waitFor(
      async () => {
        const events = await api<WireEvent[]>(b, `/api/v1/sessions/${sessionId}/events`);
        seen = events.map((event) => event.type);
        return events.find((event) => event.type === "turn.completed");
      },
      30_000,
      () => `the turn's end on B\n${b.stderr()}\n${seen.join(" ")}`,
    );
    expect(completed.payload).toMatchObject({ turnId: asked.task_id, outcome: "completed" });
    expect(await fs.readFile(path.join(workspace, "taken-over.txt"), "utf8")).toBe("by B");
    const [turn] = await query<{ status: string; runState: string | null }>(
      `SELECT "status", "runState" FROM "Turn" WHERE "id" = '${asked.task_id}'`,
    );
    expect(turn).toEqual({ status: "completed", runState: null });
  }, 180_000);
});
