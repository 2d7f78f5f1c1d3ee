/**
 * Team mode fan-out: two bridges of one deployment (PostgreSQL + Redis) in this
 * process, so one clock stamps both ends. An event is appended to a session's log on bridge A;
 * a tab (socket.io-client) subscribed to the session on bridge B receives it after A's insert
 * commits, A publishes on Redis, B reads the rows and fans them out to its socket:
 *   bridge_fanout_p50_ms / bridge_fanout_p99_ms — append on A → event in the tab on B.
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
import type { Ack, EventEnvelope, SubscribeResult } from "../server/protocol";
import { isMain, printJsonLine } from "./lib/cli";
import { percentile, round, sleep } from "./lib/stats";

const TOKEN = "bench-token-0123456789abcdef";
/** Events measured, one at a time with a pause between, so each sample is one event's trip. */
const SAMPLES = 300;
const PAUSE_MS = 5;

export interface BridgesBenchResult {
  bridge_fanout_samples: number;
  bridge_fanout_p50_ms: number;
  bridge_fanout_p99_ms: number;
  bridge_fanout_max_ms: number;
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
  return {
    bridge_fanout_samples: samples.length,
    bridge_fanout_p50_ms: round(percentile(samples, 50)),
    bridge_fanout_p99_ms: round(percentile(samples, 99)),
    bridge_fanout_max_ms: round(Math.max(...samples)),
  };
}

if (isMain(import.meta.url)) printJsonLine(await run());
