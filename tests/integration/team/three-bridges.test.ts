import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ack, ApprovalView } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { TEST_POSTGRES } from "../../db";
import { uniqueId } from "../helpers";
import { waitFor } from "../../support/wait";
import { PtyViewer } from "../pty/pty-client";
import { startChildBridge, type ChildBridge } from "../reliability/child-bridge";
import { comparable, SyncClient } from "../sync/support";

/**
 * Team mode: three `worldline serve` processes (A, B, C) sharing one PostgreSQL database, one
 * Redis (this run's own key prefix) and the tokens, each on its own port, no sticky sessions.
 * Each bridge's shells see TEAM_BRIDGE=<its name>, so the test can tell where a command ran.
 */
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const SERVER = TEST_POSTGRES;
const ALICE = "alice-token-0123456789abcdef";
const CAROL = "carol-token-0123456789abcdef";

let fake: FakeLlm;
let database: string;
let workspace: string;
let env: Record<string, string>;
const bridges: Record<string, ChildBridge> = {};
const sockets: Socket[] = [];
const tabs: SyncClient[] = [];

function serverUrl(name: string): string {
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  return url.toString();
}

async function start(name: string): Promise<ChildBridge> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), `wl-team-${name}-`));
  bridges[name] = await startChildBridge({
    home,
    llmUrl: fake.url,
    // HOME: login shells of this machine's user may block on profile scripts; the shells here get a clean one.
    env: { ...env, TEAM_BRIDGE: name, HOME: home },
  });
  return bridges[name];
}

function socketOn(bridge: ChildBridge, token = ALICE): Socket {
  const socket = io(bridge.url, { auth: { token }, transports: ["websocket"], forceNew: true });
  sockets.push(socket);
  return socket;
}

function tabOn(bridge: ChildBridge, sessionId: string): SyncClient {
  const tab = new SyncClient(bridge.url, sessionId, { token: ALICE });
  tabs.push(tab);
  return tab;
}

async function command<T>(socket: Socket, name: string, payload: Record<string, unknown>, once = true): Promise<T> {
  const body = once ? { commandId: uniqueId(), ...payload } : payload;
  const ack = (await socket.timeout(15_000).emitWithAck(name, body)) as Ack<T>;
  if (!ack.ok) throw new Error(`${name}: ${ack.error.code} ${ack.error.message}`);
  return ack.data;
}

async function api<T>(bridge: ChildBridge, pathname: string, body?: unknown, token = ALICE): Promise<T> {
  const response = await fetch(`${bridge.url}${pathname}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function newSession(bridge: ChildBridge, yolo: boolean): Promise<string> {
  return (await api<{ id: string }>(bridge, "/api/v1/sessions", { workspace, yolo })).id;
}

// Team mode is PostgreSQL + Redis: it runs in the PostgreSQL pass (package.json, test:integration:postgres).
describe.skipIf(!TEST_POSTGRES)("three bridges, one deployment (PostgreSQL + Redis)", () => {
  beforeAll(async () => {
    fake = await startFakeLlm();
    database = `wlt_team_${randomUUID().replaceAll("-", "")}`;
    workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-team-ws-")));
    env = {
      DATABASE_URL: serverUrl(database),
      REDIS_URL,
      WORLDLINE_REDIS_PREFIX: `wlt-${randomUUID()}`,
      WORLDLINE_TOKEN: ALICE,
      WORLDLINE_TOKENS: `carol:${CAROL}`,
    };
    // One at a time: the first creates and migrates the database.
    await start("A");
    await start("B");
    await start("C");
  });

  afterAll(async () => {
    for (const tab of tabs) tab.close();
    for (const socket of sockets) socket.disconnect();
    for (const bridge of Object.values(bridges)) {
      if (bridge.child.exitCode === null && bridge.child.signalCode === null) {
        bridge.child.kill("SIGTERM");
        await bridge.exited;
      }
    }
    await fake?.close();
    const client = new pg.Client({ connectionString: serverUrl("postgres") });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    await client.end();
  });

  it("a tab on A sees B's turn live; a prompt sent to C meanwhile is forwarded to B and queued there", async () => {
    const sessionId = await newSession(bridges.A, true);
    const tab = tabOn(bridges.A, sessionId);
    await waitFor(() => tab.subscribes > 0, 10_000, "the tab's subscribe");
    fake.script({ text: "streamed from B, slowly", chunkSize: 4, delayMs: 150 }, { text: "second, on B too" });
    const started = await command<{ turnId: string }>(socketOn(bridges.B), "turn.prompt", {
      sessionId,
      text: "hello B",
    });
    // Live: the tab on A has B's first deltas while B is still streaming.
    await waitFor(
      () => tab.applied.some((event) => event.type === "message.part.delta"),
      10_000,
      "a delta of B's turn on A",
    );
    expect(tab.applied.some((event) => event.type === "turn.completed")).toBe(false);
    const second = await command<{ turnId: string; queued: boolean }>(socketOn(bridges.C), "turn.prompt", {
      sessionId,
      text: "and then this",
    });
    expect(second.queued).toBe(true);
    const completed = () => tab.applied.filter((event) => event.type === "turn.completed");
    await waitFor(() => completed().length === 2, 20_000, "both turns' ends on A");
    expect(completed().map((event) => event.payload)).toEqual([
      expect.objectContaining({ turnId: started.turnId, outcome: "completed" }),
      expect.objectContaining({ turnId: second.turnId, outcome: "completed" }),
    ]);
  });

  it("GET /sessions/:id on any bridge reports the turn running on another", async () => {
    const sessionId = await newSession(bridges.A, true);
    const tab = tabOn(bridges.A, sessionId);
    await waitFor(() => tab.subscribes > 0, 10_000, "the tab's subscribe");
    fake.script({ text: "a slow turn on B", chunkSize: 2, delayMs: 150 });
    const started = await command<{ turnId: string }>(socketOn(bridges.B), "turn.prompt", { sessionId, text: "go" });
    await waitFor(
      () => tab.applied.some((event) => event.type === "message.part.delta"),
      10_000,
      "a delta of B's turn on A",
    );
    const seenOnC = await api<{ running_task_id: string | null }>(bridges.C, `/api/v1/sessions/${sessionId}`);
    expect(seenOnC.running_task_id).toBe(started.turnId);
    await waitFor(() => tab.applied.some((event) => event.type === "turn.completed"), 20_000, "the turn's end on A");
    await waitFor(
      async () =>
        (await api<{ running_task_id: string | null }>(bridges.C, `/api/v1/sessions/${sessionId}`)).running_task_id ===
        null,
      10_000,
      "C to see the turn ended",
    );
  });

  it("an approval asked on A and decided on C runs on A, decided_by the token's name", async () => {
    const sessionId = await newSession(bridges.A, false);
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: 'echo "ran on $TEAM_BRIDGE" >> where.txt' } }] },
      { text: "Done." },
    );
    await command(socketOn(bridges.A), "turn.prompt", { sessionId, text: "run it" });
    const request = await waitFor(
      async () => (await api<ApprovalView[]>(bridges.C, `/api/v1/approvals?status=pending&session_id=${sessionId}`))[0],
      20_000,
      "the request listed on C",
    );
    const decided = await api<ApprovalView>(
      bridges.C,
      `/api/v1/approvals/${request.approval_id}`,
      { decision: "allow_once" },
      CAROL,
    );
    expect(decided).toMatchObject({ status: "approved", decided_by: "carol" });
    const tab = tabOn(bridges.B, sessionId);
    await waitFor(() => tab.applied.some((event) => event.type === "turn.completed"), 20_000, "the turn's end");
    expect(await fs.readFile(path.join(workspace, "where.txt"), "utf8")).toBe("ran on A\n");
  });

  it("typing into a terminal owned by B from a tab on C works", async () => {
    const sessionId = await newSession(bridges.A, true);
    const onB = socketOn(bridges.B);
    const created = await command<{ terminalId: string }>(onB, "pty.create", { sessionId, cols: 80, rows: 24 });
    const onC = socketOn(bridges.C);
    const listed = await command<{ terminals: { terminalId: string }[] }>(onC, "pty.list", { sessionId }, false);
    expect(listed.terminals.map((terminal) => terminal.terminalId)).toEqual([created.terminalId]);
    const viewer = new PtyViewer(onC, sessionId, created.terminalId, { xterm: false });
    await viewer.attach();
    viewer.input('echo "typed on $TEAM_BRIDGE"\r');
    await waitFor(() => viewer.text().includes("typed on B"), 20_000, "the terminal's answer on C");
    viewer.dispose();
  });

  it("after kill -9 of the owner another bridge takes the session's next prompt, and nothing acknowledged is lost", async () => {
    const sessionId = await newSession(bridges.A, true);
    const tab = tabOn(bridges.A, sessionId);
    await waitFor(() => tab.subscribes > 0, 10_000, "the tab's subscribe");
    // B runs a turn that is still streaming when it dies.
    fake.script({ text: "a long answer that never ends ".repeat(20), chunkSize: 4, delayMs: 200 });
    await command(socketOn(bridges.B), "turn.prompt", { sessionId, text: "start on B" });
    await waitFor(() => tab.applied.some((event) => event.type === "message.part.delta"), 10_000, "B's turn streaming");
    bridges.B.child.kill("SIGKILL");
    await bridges.B.exited;
    const acknowledged = comparable(tab.applied);
    const killedAt = Date.now();

    fake.reset();
    fake.script({ text: "C took over." });
    const onC = socketOn(bridges.C);
    // Refused while B's turn still counts as running; taken once B is judged dead (within the 30 s a user waits).
    let refusal = "no answer yet";
    const taken = await waitFor(
      async () => {
        const ack = (await onC
          .timeout(15_000)
          .emitWithAck("turn.prompt", { commandId: uniqueId(), sessionId, text: "continue on C" })) as Ack<{
          turnId: string;
        }>;
        if (!ack.ok) refusal = ack.error.message;
        return ack.ok ? ack.data : undefined;
      },
      30_000 - (Date.now() - killedAt),
      () => `C to take the prompt within 30 s of the kill (last refusal: ${refusal})`,
    );
    await waitFor(
      () =>
        tab.applied.some(
          (event) => event.type === "turn.completed" && (event.payload as { turnId: string }).turnId === taken!.turnId,
        ),
      20_000,
      "C's turn on A",
    );
    const outcomes = tab.applied
      .filter((event) => event.type === "turn.completed")
      .map((event) => (event.payload as { outcome: string }).outcome);
    expect(outcomes).toEqual(["interrupted", "completed"]);

    // Every event the tab had before the kill is in the log, unchanged; the log has no gap.
    const stored = await api<{ seq: number; type: string; payload: unknown; created_at: string }[]>(
      bridges.A,
      `/api/v1/sessions/${sessionId}/events`,
    );
    expect(stored.map((event) => event.seq)).toEqual(stored.map((_, index) => index + 1));
    expect(comparable(stored).slice(0, acknowledged.length)).toEqual(acknowledged);
    await waitFor(() => tab.lastSeq === stored.at(-1)?.seq, 5_000, "the tab at the log's end");
    expect(comparable(tab.applied)).toEqual(comparable(stored));
  });
});
