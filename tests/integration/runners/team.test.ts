import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TerminalInfo } from "../../../server/protocol";
import { TEST_POSTGRES } from "../../db";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { emitCommand, readSse, uniqueId, waitFor } from "../helpers";
import { PtyViewer } from "../pty/pty-client";
import { CHILD_TOKEN, startChildBridge, type ChildBridge } from "../reliability/child-bridge";
import { freePort } from "../../support/ports";
import { startCuttableProxy, startRunner, tempDir, type CuttableProxy, type RunnerProcess } from "./support";

/** Short, so the kill -9 test sees the grace end without waiting the real 30 s. */
const GRACE_MS = 3_000;
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

interface Event {
  type: string;
  payload: any;
}

/**
 * Runners in team mode: two `worldline serve` processes (A, B) on one PostgreSQL database and one
 * Redis, and two `worldline runner` processes with their own homes and roots: "north" dials A,
 * "south" dials B through a hop the test can cut and point at A. Any bridge serves any runner's
 * sessions, whichever bridge its socket is on.
 */
describe.skipIf(!TEST_POSTGRES)("runners in team mode (PostgreSQL + Redis; set WORLDLINE_TEST_POSTGRES)", () => {
  let fake: FakeLlm;
  let database: string;
  let A: ChildBridge;
  let B: ChildBridge;
  let proxy: CuttableProxy;
  let northRoot: string;
  let southRoot: string;
  let northHome: string;
  let north: RunnerProcess;
  let south: RunnerProcess;
  const runners: RunnerProcess[] = [];
  const sockets: Socket[] = [];

  function databaseUrl(name: string): string {
    const url = new URL(TEST_POSTGRES);
    url.pathname = `/${name}`;
    return url.toString();
  }

  async function json<T>(bridge: ChildBridge, pathname: string, body?: unknown): Promise<T> {
    const response = await bridge.api(pathname, body === undefined ? {} : { body });
    if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  const events = (bridge: ChildBridge, sessionId: string) =>
    json<Event[]>(bridge, `/api/v1/sessions/${sessionId}/events?after=0`);

  function socketOn(bridge: ChildBridge): Socket {
    const socket = io(bridge.url, { auth: { token: CHILD_TOKEN }, transports: ["websocket"], forceNew: true });
    sockets.push(socket);
    return socket;
  }

  function launch(options: { hub: string; token: string; home: string; roots: string[] }): RunnerProcess {
    const runner = startRunner(options);
    runners.push(runner);
    return runner;
  }

  async function connectedOn(bridge: ChildBridge, name: string): Promise<boolean> {
    const list = await json<{ name: string; connected: boolean }[]>(bridge, "/api/v1/runners");
    return list.find((runner) => runner.name === name)?.connected === true;
  }

  beforeAll(async () => {
    fake = await startFakeLlm();
    database = `wlt_runners_${randomUUID().replaceAll("-", "")}`;
    // The south runner dials B, later A, through a proxy whose Host both allow (/runner.io/ checks it).
    const proxyPort = await freePort();
    const env = {
      DATABASE_URL: databaseUrl(database),
      REDIS_URL,
      WORLDLINE_REDIS_PREFIX: `wlt-${randomUUID()}`,
      WORLDLINE_RUNNER_GRACE_MS: String(GRACE_MS),
      WORLDLINE_ALLOWED_HOSTS: `127.0.0.1:${proxyPort}`,
    };
    // One at a time: the first creates and migrates the database.
    for (const name of ["A", "B"]) {
      const home = await tempDir(`wl-runners-team-${name}-`);
      const bridge = await startChildBridge({ home, llmUrl: fake.url, env: { ...env, HOME: home } });
      if (name === "A") A = bridge;
      else B = bridge;
    }
    proxy = await startCuttableProxy(Number(new URL(B.url).port), proxyPort);
    northRoot = await tempDir("wl-runners-team-north-root-");
    southRoot = await tempDir("wl-runners-team-south-root-");
    northHome = await tempDir("wl-runners-team-north-home-");
    await fs.writeFile(path.join(northRoot, "hello.txt"), "hello from north\n");
    const enroll = async (name: string) => (await json<{ token: string }>(A, "/api/v1/runners", { name })).token;
    north = launch({ hub: A.url, token: await enroll("north"), home: northHome, roots: [northRoot] });
    south = launch({
      hub: proxy.url,
      token: await enroll("south"),
      home: await tempDir("wl-runners-team-south-home-"),
      roots: [southRoot],
    });
    await Promise.all([north.connected(), south.connected()]);
  }, 120_000);

  afterAll(async () => {
    for (const socket of sockets) socket.disconnect();
    for (const runner of runners) runner.child.kill("SIGKILL");
    for (const bridge of [A, B]) {
      if (!bridge || bridge.child.exitCode !== null || bridge.child.signalCode !== null) continue;
      bridge.child.kill("SIGTERM");
      await bridge.exited;
    }
    await proxy?.close();
    await fake?.close();
    const client = new pg.Client({ connectionString: databaseUrl("postgres") });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    await client.end();
  });

  it("shows each runner connected on every bridge", async () => {
    for (const bridge of [A, B])
      for (const name of ["north", "south"])
        await waitFor(() => connectedOn(bridge, name), 10_000, `${name} connected on ${bridge.url}`);
  });

  it("refuses a copy of a runner's credential on the other bridge while the runner is connected, and reports it to admins", async () => {
    // north's socket is on A; a copy of its credential (read from its machine) dials B as another process.
    await waitFor(() => connectedOn(B, "north"), 10_000, "B to know north is connected to A");
    const { credential } = JSON.parse(await fs.readFile(path.join(northHome, "runner.json"), "utf8")) as {
      credential: string;
    };
    const answer = await new Promise<string>((resolve) => {
      const thief = io(B.url, {
        path: "/runner.io/",
        transports: ["websocket"],
        auth: { credential, roots: [northRoot], instance: "thief-instance-2", version: "x" },
        reconnection: false,
      });
      thief.on("connect", () => {
        thief.disconnect();
        resolve("connected");
      });
      thief.on("connect_error", (error) => resolve(error.message));
    });
    expect(answer).toMatch(/runner:busy/);
    expect(B.stderr()).toMatch(
      /SECURITY: runner "north" is connected, and another connection with its credential was refused/,
    );
    // Both bridges list it (one database), and north still works from both, its credential unchanged.
    for (const bridge of [A, B]) {
      const list = await json<{ name: string; connected: boolean; duplicate_at: string | null }[]>(
        bridge,
        "/api/v1/runners",
      );
      const entry = list.find((runner) => runner.name === "north");
      expect(entry?.connected).toBe(true);
      expect(entry?.duplicate_at).not.toBeNull();
    }
    const saved = JSON.parse(await fs.readFile(path.join(northHome, "runner.json"), "utf8")) as { credential: string };
    expect(saved.credential).toBe(credential);
    expect(north.stdout().match(/connected to /g)).toHaveLength(1);
  }, 30_000);

  it("runs a whole turn's tools on a runner connected to the other bridge", async () => {
    // north's socket is on A; the session is made, prompted and run on B.
    const session = await json<{ id: string; runner: string }>(B, "/api/v1/sessions", {
      workspace: northRoot,
      runner: "north",
      yolo: true,
    });
    expect(session.runner).toBe("north");
    fake.script(
      {
        toolCalls: [
          { id: "t1", name: "read_file", arguments: { path: "hello.txt" } },
          { id: "t2", name: "write_file", arguments: { path: "from-b.txt", content: "written through B\n" } },
        ],
      },
      {
        toolCalls: [
          { id: "t3", name: "shell", arguments: { command: "echo ran-in-$(basename $PWD); cat from-b.txt" } },
        ],
      },
      { text: "Done on north." },
    );
    const response = await B.api("/api/v1/chat/stream", { body: { message: "work", session_id: session.id } });
    expect(response.status).toBe(200);
    await readSse(response);
    const log = await events(B, session.id);
    const results = new Map(
      log
        .filter((event) => event.type === "tool.state" && event.payload.state !== "running")
        .map((event) => [event.payload.toolCallId as string, event.payload as { output: string; isError: boolean }]),
    );
    expect(results.get("t1")?.output).toContain("hello from north");
    expect(results.get("t2")?.isError).toBe(false);
    expect(results.get("t3")?.output).toContain(`ran-in-${path.basename(northRoot)}`);
    expect(results.get("t3")?.output).toContain("written through B");
    expect(await fs.readFile(path.join(northRoot, "from-b.txt"), "utf8")).toBe("written through B\n");
    expect(log.map((event) => event.type)).toContain("turn.completed");
    // The file views of A see it too.
    const file = await json<{ content: string }>(A, `/api/v1/sessions/${session.id}/files/content?path=from-b.txt`);
    expect(file.content).toBe("written through B\n");
  }, 60_000);

  it("shows a runner's terminal in tabs on both bridges, and replays what it wrote while moving to the other bridge", async () => {
    // south's socket is on B; the terminal is opened on A (where its screen and viewers live).
    const session = await json<{ id: string }>(A, "/api/v1/sessions", { workspace: southRoot, runner: "south" });
    const onA = socketOn(A);
    const terminal = await emitCommand<TerminalInfo>(onA, "pty.create", {
      commandId: uniqueId(),
      sessionId: session.id,
      cols: 100,
      rows: 30,
    });
    const viewerA = new PtyViewer(onA, session.id, terminal.terminalId, { cols: 100, rows: 30 });
    await viewerA.attach();
    const viewerB = new PtyViewer(socketOn(B), session.id, terminal.terminalId, { cols: 100, rows: 30 });
    await viewerB.attach();
    viewerB.input("echo typed-on-b home=$WORLDLINE_HOME sum-$((40+2))\r");
    for (const viewer of [viewerA, viewerB])
      await waitFor(() => viewer.text().includes("sum-42"), 20_000, "the answer in both tabs");
    expect(viewerA.text()).toContain(`home=${south.home}`);

    // The hop is cut and comes back pointing at A: south reconnects there, and what its shell wrote meanwhile arrives.
    viewerA.input("echo cut-$((3+3)); sleep 2; echo away-$((1+1)); echo still-$((2+2))\r");
    await waitFor(() => viewerA.text().includes("cut-6"), 20_000, "the line to start on the runner");
    proxy.cut();
    proxy.restore(Number(new URL(A.url).port));
    await south.connected(2);
    for (const viewer of [viewerA, viewerB])
      await waitFor(() => viewer.text().includes("still-4"), 20_000, "the output written while away, in both tabs");
    expect(viewerB.text().indexOf("away-2")).toBeLessThan(viewerB.text().indexOf("still-4"));
    await waitFor(() => connectedOn(B, "south"), 10_000, "south listed as connected on B");
    // Typing still reaches it, from either tab.
    viewerB.input("echo after-move-$((5+5))\r");
    for (const viewer of [viewerA, viewerB])
      await waitFor(() => viewer.text().includes("after-move-10"), 20_000, "typing after the move");
  }, 90_000);

  it("fails a tool call after the grace when its runner is killed mid-call, keeps the transcript, and works once it is back", async () => {
    const session = await json<{ id: string }>(B, "/api/v1/sessions", {
      workspace: northRoot,
      runner: "north",
      yolo: true,
    });
    fake.script(
      { toolCalls: [{ id: "k1", name: "shell", arguments: { command: "echo started; sleep 60" } }] },
      { text: "north went away." },
    );
    const response = B.api("/api/v1/chat/stream", { body: { message: "run long", session_id: session.id } });
    await waitFor(
      async () =>
        (await events(B, session.id)).some(
          (event) => event.type === "tool.progress" && String(event.payload.text).includes("started"),
        ),
      20_000,
      "the command's first output",
    );
    const killedAt = Date.now();
    north.child.kill("SIGKILL");
    await readSse(await response);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(GRACE_MS - 100);
    const log = await events(A, session.id);
    const result = log.find((event) => event.type === "tool.state" && event.payload.state !== "running")?.payload;
    expect(result?.isError).toBe(true);
    expect(result?.output).toContain('The runner "north" disconnected and did not come back within 3 s');
    expect(log.map((event) => event.type)).toContain("turn.completed");
    // The model was told, in the tool result it got next.
    const told = (fake.requests.at(-1)!.body.messages as { role: string; content: string }[]).find(
      (message) => message.role === "tool",
    );
    expect(told?.content).toContain("did not come back");
    await waitFor(async () => !(await connectedOn(A, "north")), 10_000, "north listed as gone on A");

    // Restarted with its home (its saved credential for A's URL); a turn prompted on B runs there again.
    north = launch({ hub: A.url, token: "used-already", home: northHome, roots: [northRoot] });
    await north.connected();
    await waitFor(() => connectedOn(B, "north"), 10_000, "north connected again, seen from B");
    fake.script(
      { toolCalls: [{ id: "k2", name: "shell", arguments: { command: "echo back-$((1+1))" } }] },
      { text: "ok" },
    );
    const again = await B.api("/api/v1/chat/stream", { body: { message: "again", session_id: session.id } });
    await readSse(again);
    const after = (await events(B, session.id)).find(
      (event) => event.type === "tool.state" && event.payload.toolCallId === "k2" && event.payload.state !== "running",
    );
    expect(after?.payload.output).toContain("back-2");
  }, 90_000);

  it("disconnects a runner revoked on a bridge it is not connected to, at once, and refuses it after", async () => {
    // south's socket is on A since the move; it is revoked through B.
    const revokedAt = Date.now();
    expect((await B.api("/api/v1/runners/south", { method: "DELETE" })).status).toBe(200);
    const exit = await south.exited;
    expect(exit.code, south.stderr()).toBe(1);
    expect(Date.now() - revokedAt).toBeLessThan(2_000);
    expect(south.stderr()).toMatch(/refused by the hub/);
    for (const bridge of [A, B]) {
      const list = await json<{ name: string }[]>(bridge, "/api/v1/runners");
      expect(list.map((runner) => runner.name)).not.toContain("south");
    }
  }, 30_000);
});
