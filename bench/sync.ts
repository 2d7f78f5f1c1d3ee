/**
 * Live sync benchmark. Two figures against a real bridge in this process
 * (one clock for "appended" and "received"), with socket.io-client tabs:
 *   fanout_p50_ms / fanout_p99_ms — from an event being appended to the log until the
 *                                   fifth of five subscribed clients has it, over streamed
 *                                   multi-tool turns (target p99 ≤ 50 ms on loopback);
 *   session_replay_10k_ms         — a late client (socket.io-client, applying events with
 *                                   the shared reducer through LiveTranscript) loading a
 *                                   10,000-event session until its last event is applied
 *                                   (target ≤ 1000); cold (first fold on the bridge) and warm.
 * Run with `npx tsx bench/sync.ts`; the last line printed is one JSON object.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs/promises";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { io, type Socket } from "socket.io-client";
import { loadConfig } from "../server/config";
import { startBridge, type Bridge } from "../server/main";
import {
  LiveTranscript,
  type Ack,
  type EventEnvelope,
  type SessionEvent,
  type SubscribeResult,
} from "../server/protocol";
import { startFakeLlm } from "../tests/fake-llm/server";
import { isMain, printJsonLine } from "./lib/cli";

const TOKEN = "bench-token-0123456789abcdef";
/** Tabs in the fan-out run, from the issue. */
const CLIENTS = 5;
/** Streamed turns measured; each has tool calls across steps and a long answer. */
const TURNS = 5;
const REPLAY_EVENTS = 10_000;

export interface SyncBenchResult {
  fanout_samples: number;
  fanout_p50_ms: number;
  fanout_p99_ms: number;
  fanout_max_ms: number;
  session_replay_10k_ms: number;
  session_replay_10k_warm_ms: number;
  session_replay_10k_bytes: number;
}

export async function run(): Promise<SyncBenchResult> {
  const fake = await startFakeLlm();
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-bench-sync-"));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-bench-sync-ws-")));
  const bridge = await startBridge({
    config: loadConfig({
      PORT: "0",
      WORLDLINE_HOME: home,
      WORLDLINE_TOKEN: TOKEN,
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "x",
      WORLDLINE_MODEL: "fake-model",
    }),
    ui: false,
  });
  try {
    const fanout = await measureFanout(bridge, fake, workspace);
    const replay = await measureReplay(bridge, workspace);
    return { ...fanout, ...replay };
  } finally {
    await bridge.close();
    await fake.close();
    await fs.rm(home, { recursive: true, force: true });
    await fs.rm(workspace, { recursive: true, force: true });
  }
}

async function createSession(bridge: Bridge, workspace: string): Promise<string> {
  const response = await fetch(`${bridge.url}/api/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ workspace, yolo: true }),
  });
  return ((await response.json()) as { id: string }).id;
}

async function connect(url: string): Promise<Socket> {
  const socket = io(url, { auth: { token: TOKEN }, transports: ["websocket"], forceNew: true });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return socket;
}

async function subscribe(socket: Socket, sessionId: string, afterSeq = 0): Promise<SubscribeResult> {
  const ack = (await socket
    .timeout(30_000)
    .emitWithAck("session.subscribe", { sessionId, afterSeq })) as Ack<SubscribeResult>;
  if (!ack.ok) throw new Error(ack.error.message);
  return ack.data;
}

async function measureFanout(bridge: Bridge, fake: Awaited<ReturnType<typeof startFakeLlm>>, workspace: string) {
  await fs.writeFile(path.join(workspace, "notes.md"), "bench\n".repeat(100));
  const sessionId = await createSession(bridge, workspace);
  const appendedAt = new Map<number, number>();
  // Registered before any tab: listeners run in order, so this stamps the moment of the append.
  bridge.services.log.subscribe(sessionId, (event) => appendedAt.set(event.seq, wallNow()));
  // The five tabs live in another process, as browser tabs do: the bridge's own work must not
  // delay their reading, and both sides stamp with the same wall clock (timeOrigin + now).
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--clients", bridge.url, sessionId],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! });
  const arrivals: Record<string, number> = {};
  let ready = false;
  let lastSeen = 0;
  lines.on("line", (line) => {
    if (line === "ready") ready = true;
    else if (line.startsWith("seen ")) lastSeen = Number(line.slice(5));
    else if (line.startsWith("{")) Object.assign(arrivals, JSON.parse(line));
  });
  await waitUntil(() => ready, 30_000);
  const sockets = [await connect(bridge.url)];
  const words = Array.from({ length: 600 }, (_, i) => `token${i}`).join(" ");
  for (let turn = 0; turn < TURNS; turn++) {
    fake.script(
      {
        reasoning: "Checking the notes.",
        toolCalls: [
          { name: "read_file", arguments: { path: "notes.md" } },
          { name: "glob", arguments: { pattern: "*" } },
        ],
        delayMs: 2,
      },
      { toolCalls: [{ name: "write_file", arguments: { path: `out${turn}.md`, content: words } }], delayMs: 2 },
      { text: words, chunkSize: 6, delayMs: 2 },
    );
    const before = bridge.services.log.lastSeq(sessionId);
    const ack = (await sockets[0].timeout(30_000).emitWithAck("turn.prompt", {
      commandId: `bench-${turn}-${Date.now()}`,
      sessionId,
      text: `turn ${turn}`,
    })) as Ack;
    if (!ack.ok) throw new Error(ack.error.message);
    await waitUntil(() => {
      const last = bridge.services.log.lastSeq(sessionId);
      return last > before && lastSeen >= last && !bridge.services.runtime.runningTurn(sessionId);
    }, 60_000);
  }
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
  const lastArrival = new Map(Object.entries(arrivals).map(([seq, at]) => [Number(seq), at] as const));
  const latencies = [...lastArrival]
    .filter(([seq]) => appendedAt.has(seq))
    .map(([seq, at]) => at - appendedAt.get(seq)!);
  latencies.sort((a, b) => a - b);
  for (const socket of sockets) socket.disconnect();
  return {
    fanout_samples: latencies.length,
    fanout_p50_ms: round(percentile(latencies, 0.5)),
    fanout_p99_ms: round(percentile(latencies, 0.99)),
    fanout_max_ms: round(latencies.at(-1) ?? 0),
  };
}

/** A long session as real turns leave it: prompts, interleaved text/reasoning deltas, tool calls and results. */
function* syntheticTurns(): Generator<SessionEvent> {
  for (let turn = 0; ; turn++) {
    const turnId = `turn-${turn}`;
    const messageId = `msg-${turn}`;
    yield { type: "turn.started", payload: { turnId, number: turn + 1, prompt: `prompt ${turn}` } };
    yield { type: "message.user", payload: { turnId, messageId: `user-${turn}`, text: `Please do step ${turn}.` } };
    for (let i = 0; i < 30; i++) {
      yield {
        type: "message.part.delta",
        payload: {
          turnId,
          messageId,
          part: i % 2 === 0 ? "reasoning" : "text",
          delta: `chunk ${i} of turn ${turn}, some words to read. `,
        },
      };
    }
    for (let t = 0; t < 3; t++) {
      const toolCallId = `call-${turn}-${t}`;
      yield {
        type: "tool.call",
        payload: { turnId, messageId, toolCallId, name: "read_file", args: { path: `file${t}.ts` } },
      };
      yield { type: "tool.state", payload: { turnId, toolCallId, state: "running" } };
      yield { type: "tool.state", payload: { turnId, toolCallId, state: "completed", output: "line\n".repeat(20) } };
    }
    yield { type: "message.completed", payload: { turnId, messageId } };
    yield { type: "turn.completed", payload: { turnId, outcome: "completed" } };
  }
}

async function measureReplay(bridge: Bridge, workspace: string) {
  const sessionId = await createSession(bridge, workspace);
  const { log } = bridge.services;
  const events = syntheticTurns();
  // The log counts an event once its row is written, so append in batches and write each.
  while (log.lastSeq(sessionId) < REPLAY_EVENTS - 1) {
    const missing = REPLAY_EVENTS - 1 - log.lastSeq(sessionId);
    for (let i = 0; i < missing; i++) log.append(sessionId, events.next().value as SessionEvent);
    await log.flush();
  }
  // A last non-delta event also emits a delta still being coalesced: the log ends exactly here.
  log.append(sessionId, { type: "notice", payload: { level: "info", text: "end of the long session" } });
  await log.flush();
  const target = log.lastSeq(sessionId);
  const loadOnce = async () => {
    const started = performance.now();
    const socket = await connect(bridge.url);
    const live = new LiveTranscript();
    const result = await subscribe(socket, sessionId);
    live.subscribed(result);
    if (live.state.lastSeq !== target) throw new Error(`late client stopped at ${live.state.lastSeq} of ${target}`);
    const ms = performance.now() - started;
    socket.disconnect();
    return { ms, bytes: JSON.stringify(result).length };
  };
  const cold = await loadOnce();
  const warm = await loadOnce();
  return {
    session_replay_10k_ms: round(cold.ms),
    session_replay_10k_warm_ms: round(warm.ms),
    session_replay_10k_bytes: cold.bytes,
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("bench: timed out waiting for the turn");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Client mode: five tabs subscribed to one session; prints when the fifth has each event. */
async function runClients(url: string, sessionId: string): Promise<void> {
  const received = new Map<number, number>();
  const fifth: Record<number, number> = {};
  let seen = 0;
  const sockets = await Promise.all(Array.from({ length: CLIENTS }, () => connect(url)));
  for (const socket of sockets) {
    const live = new LiveTranscript();
    socket.on("session.events", (message: { events: EventEnvelope[] }) => {
      const now = wallNow();
      for (const event of message.events) {
        const count = (received.get(event.seq) ?? 0) + 1;
        received.set(event.seq, count);
        if (count === CLIENTS) {
          fifth[event.seq] = now;
          if (event.seq > seen) {
            seen = event.seq;
            process.stdout.write(`seen ${seen}\n`);
          }
        }
      }
      live.live(message.events);
    });
    live.subscribed(await subscribe(socket, sessionId));
  }
  process.stdout.write("ready\n");
  process.once("SIGTERM", () => {
    process.stdout.write(`${JSON.stringify(fifth)}\n`, () => process.exit(0));
  });
}

if (process.argv[2] === "--clients") {
  await runClients(process.argv[3], process.argv[4]);
} else if (isMain(import.meta.url)) {
  const result = await run();
  printJsonLine(result);
}
