/**
 * Team mode fan-out: two bridges of one deployment (PostgreSQL + Redis) in this
 * process, so one clock stamps both ends. An event is appended to a session's log on bridge A;
 * a tab (socket.io-client) subscribed to the session on bridge B receives it after A's insert
 * commits, A publishes on Redis, B reads the rows and fans them out to its socket:
 *   bridge_fanout_p50_ms / bridge_fanout_p99_ms — append on A → event in the tab on B.
 *   team_keystroke_echo_p50_ms — a key typed in a tab on B into a terminal running on A, until its
 *     echo is back in that tab (B → Redis → A's pty → Redis → B); KEYSTROKES of them, one at a time.
 * Needs PostgreSQL and Redis on 127.0.0.1 (or WL_BENCH_POSTGRES / REDIS_URL); the database and
 * the Redis key prefix are this run's own. Run with `npx tsx bench/bridges.ts`.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { io } from "socket.io-client";
import { loadConfig } from "../server/config";
import { startBridge, type Bridge } from "../server/main";
import type { Ack, EventEnvelope, SubscribeResult, TerminalInfo } from "../server/protocol";
import { PtyViewer } from "../tests/integration/pty/pty-client";
import { command, connectSocket } from "./lib/bridge-child";
import { isMain, printJsonLine } from "./lib/cli";
import { percentile, round, sleep } from "./lib/stats";

const TOKEN = "bench-token-0123456789abcdef";
/** Events measured, one at a time with a pause between, so each sample is one event's trip. */
const SAMPLES = 300;
const PAUSE_MS = 5;
/** Keystrokes timed for the echo through another bridge, with a pause between them like typing. */
const KEYSTROKES = 100;
const KEYSTROKE_GAP_MS = 15;

export interface BridgesBenchResult {
  bridge_fanout_samples: number;
  bridge_fanout_p50_ms: number;
  bridge_fanout_p99_ms: number;
  bridge_fanout_max_ms: number;
  team_keystroke_echo_p50_ms: number;
  team_keystroke_echo_p95_ms: number;
}

export async function run(): Promise<BridgesBenchResult> {
  const server = process.env.WL_BENCH_POSTGRES ?? "postgresql://postgres@127.0.0.1:5432";
  const database = `wl_bench_${randomUUID().replaceAll("-", "")}`;
  const url = new URL(server);
  url.pathname = `/${database}`;
  const prefix = `wl-bench-${randomUUID()}`;
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-bench-team-ws-")));
  const bridges: Bridge[] = [];
  try {
    for (const name of ["a", "b"]) {
      const home = await fs.mkdtemp(path.join(os.tmpdir(), `wl-bench-team-${name}-`));
      const config = loadConfig({
        PORT: "0",
        WORLDLINE_HOME: home,
        WORLDLINE_TOKEN: TOKEN,
        DATABASE_URL: url.toString(),
        REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
        WORLDLINE_REDIS_PREFIX: prefix,
      });
      bridges.push(await startBridge({ config, ui: false }));
    }
    return await measure(bridges[0], bridges[1], workspace);
  } finally {
    for (const bridge of bridges) await bridge.close();
    const admin = new URL(server);
    admin.pathname = "/postgres";
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
    await client.end();
  }
}

async function measure(a: Bridge, b: Bridge, workspace: string): Promise<BridgesBenchResult> {
  const response = await fetch(`${a.url}/api/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ workspace, yolo: true }),
  });
  const sessionId = ((await response.json()) as { id: string }).id;
  const tab = io(b.url, { auth: { token: TOKEN }, transports: ["websocket"], forceNew: true });
  const arrived = new Map<string, number>();
  tab.on("session.events", (message: { events: EventEnvelope[] }) => {
    const now = performance.now();
    for (const event of message.events) if (event.type === "notice") arrived.set(event.payload.text, now);
  });
  const ack = (await tab.timeout(30_000).emitWithAck("session.subscribe", { sessionId })) as Ack<SubscribeResult>;
  if (!ack.ok) throw new Error(ack.error.message);
  const log = a.services.log;
  await log.open(sessionId);
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const text = `sample ${i}`;
    const appendedAt = performance.now();
    log.append(sessionId, { type: "notice", payload: { level: "info", text } });
    const deadline = appendedAt + 10_000;
    while (!arrived.has(text)) {
      if (performance.now() > deadline) throw new Error(`${text} never reached bridge B's tab`);
      await sleep(0.5);
    }
    samples.push(arrived.get(text)! - appendedAt);
    await sleep(PAUSE_MS);
  }
  tab.disconnect();
  const echoes = await keystrokeEchoes(a, b, sessionId);
  return {
    bridge_fanout_samples: samples.length,
    bridge_fanout_p50_ms: round(percentile(samples, 50)),
    bridge_fanout_p99_ms: round(percentile(samples, 99)),
    bridge_fanout_max_ms: round(Math.max(...samples)),
    team_keystroke_echo_p50_ms: round(percentile(echoes, 50)),
    team_keystroke_echo_p95_ms: round(percentile(echoes, 95)),
  };
}

/** A terminal opened on A, typed into from a tab on B: each key until its echo is back on B. */
async function keystrokeEchoes(a: Bridge, b: Bridge, sessionId: string): Promise<number[]> {
  const onA = await connectSocket(a.url, TOKEN);
  const onB = await connectSocket(b.url, TOKEN);
  try {
    const { terminalId } = await command<TerminalInfo>(onA, "pty.create", { sessionId, cols: 120, rows: 30 });
    const viewer = new PtyViewer(onB, sessionId, terminalId, { cols: 120, rows: 30, xterm: false });
    await viewer.attach();
    const deadline = performance.now() + 10_000;
    while (viewer.received === 0 && performance.now() < deadline) await sleep(20);
    await sleep(200); // the shell's first prompt settles
    const samples: number[] = [];
    for (let i = 0; i < KEYSTROKES; i++) {
      const key = String.fromCharCode(97 + (i % 26));
      const echoed = new Promise<void>((resolve) => viewer.onData((chunk) => chunk.includes(key) && resolve()));
      const start = performance.now();
      viewer.input(key);
      await echoed;
      samples.push(performance.now() - start);
      if (i % 40 === 39) viewer.input("\x15"); // Ctrl-U keeps the line short.
      await sleep(KEYSTROKE_GAP_MS);
    }
    viewer.dispose();
    return samples;
  } finally {
    onA.disconnect();
    onB.disconnect();
  }
}

if (isMain(import.meta.url)) printJsonLine(await run());
