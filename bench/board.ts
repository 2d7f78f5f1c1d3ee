/**
 * The board's live cards: `board_update_p99_ms` is the time from an event being appended to the
 * log of one of 20 sessions whose turns run at once, until a tab subscribed to the board
 * (`board.subscribe` over socket.io) has a card that shows it (target ≤ 100 ms). Every turn makes
 * tool calls (`glob`, each with its own pattern, so each changes its card's last activity); an
 * event counts as shown by the first card of its session carrying its activity or a later one
 * (the board rebuilds a card once per burst, so a newer card stands for the events before it).
 * The tab lives in a process of its own, as a browser tab does (the bridge's work does not delay its
 * reading); both sides stamp with the same wall clock. Run with `npx tsx bench/board.ts`; the last
 * line printed is one JSON object.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { io, type Socket } from "socket.io-client";
import { loadConfig } from "../server/config";
import { startBridge, type Bridge } from "../server/main";
import type { Ack, BoardCard } from "../server/protocol";
import { startFakeLlm } from "../tests/fake-llm/server";
import { isMain, printJsonLine } from "./lib/cli";
import { median, percentile, round, sleep } from "./lib/stats";

const TOKEN = "bench-token-board-0123456789abcdef";
/** Sessions running at once, from the issue. */
const SESSIONS = 20;
/** Tool steps per session's turn on average (the fake model's queue is shared, first come first served). */
const STEPS = 10;

export interface BoardBenchResult {
  sessions: number;
  board_update_samples: number;
  board_update_p50_ms: number;
  board_update_p99_ms: number;
  board_update_max_ms: number;
}

/** An appended event waiting for the board tab to show it. */
interface Waiting {
  step: number;
  at: number;
}

export async function run(): Promise<BoardBenchResult> {
  // All 20 turns at once: the bridge's turn cap (read from the environment) is lower by default.
  process.env.WORLDLINE_MAX_TURNS = String(SESSIONS);
  const fake = await startFakeLlm();
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-bench-board-"));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-bench-board-ws-")));
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
  const socket = await connect(bridge.url);
  try {
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) ids.push(await createSession(bridge, workspace, i));
    const latencies = await measure(bridge, fake, socket, ids);
    return {
      sessions: SESSIONS,
      board_update_samples: latencies.length,
      board_update_p50_ms: round(median(latencies)),
      board_update_p99_ms: round(percentile(latencies, 99)),
      board_update_max_ms: round(Math.max(...latencies)),
    };
  } finally {
    socket.disconnect();
    await bridge.close();
    await fake.close();
    await fs.rm(home, { recursive: true, force: true });
    await fs.rm(workspace, { recursive: true, force: true });
  }
}

async function measure(
  bridge: Bridge,
  fake: Awaited<ReturnType<typeof startFakeLlm>>,
  socket: Socket,
  ids: string[],
): Promise<number[]> {
  const waiting = new Map<string, Waiting[]>(ids.map((id) => [id, []]));
  const latencies: number[] = [];
  // Registered before the board's own listener (the board starts listening on its first tab).
  bridge.services.log.onEvery((sessionId, event) => {
    if (event.type !== "tool.call") return;
    const step = stepOf(String((event.payload.args as { pattern?: unknown }).pattern));
    if (step !== null) waiting.get(sessionId)?.push({ step, at: wallNow() });
  });
  const tab = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--tab", bridge.url], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let ready = false;
  createInterface({ input: tab.stdout! }).on("line", (line) => {
    if (line === "ready") ready = true;
    const [id, step, at] = line.split(" ");
    const list = waiting.get(id);
    if (!list || step === undefined) return;
    // The first card showing this step (or a later one) shows every step appended before it.
    for (const entry of list) if (entry.step <= Number(step)) latencies.push(Number(at) - entry.at);
    waiting.set(
      id,
      list.filter((entry) => entry.step > Number(step)),
    );
  });
  const exited = once(tab, "exit");
  try {
    await runTurns(bridge, fake, socket, ids, () => ready, waiting, latencies);
  } finally {
    tab.kill("SIGTERM");
    await exited;
  }
  return latencies;
}

async function runTurns(
  bridge: Bridge,
  fake: Awaited<ReturnType<typeof startFakeLlm>>,
  socket: Socket,
  ids: string[],
  ready: () => boolean,
  waiting: Map<string, Waiting[]>,
  latencies: number[],
): Promise<void> {
  const started = Date.now() + 30_000;
  while (!ready()) {
    if (Date.now() > started) throw new Error("board bench: the board tab did not subscribe");
    await sleep(20);
  }

  fake.script(
    ...Array.from({ length: SESSIONS * STEPS }, (_, step) => ({
      toolCalls: [{ name: "glob", arguments: { pattern: patternOf(step) } }],
      firstChunkDelayMs: 15,
    })),
    ...ids.map(() => ({ text: "Done.", firstChunkDelayMs: 15 })),
  );
  await Promise.all(
    ids.map(async (sessionId, i) => {
      const ack = (await socket.timeout(30_000).emitWithAck("turn.prompt", {
        commandId: `bench-board-${i}-${Date.now()}`,
        sessionId,
        text: "Search the workspace",
      })) as Ack;
      if (!ack.ok) throw new Error(ack.error.message);
    }),
  );
  const deadline = Date.now() + 120_000;
  while (ids.some((id) => bridge.services.runtime.runningTurn(id)) || [...waiting.values()].some((l) => l.length)) {
    if (Date.now() > deadline) throw new Error(`board bench: ${latencies.length} shown, turns or cards still missing`);
    await sleep(50);
  }
}

async function connect(url: string): Promise<Socket> {
  const socket = io(url, { auth: { token: TOKEN }, transports: ["websocket"], forceNew: true });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return socket;
}

function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Tab mode: subscribes to the board; prints `<session> <step> <when>` for each card showing a step. */
async function runTab(url: string): Promise<void> {
  const socket = await connect(url);
  socket.on("board.card", (card: BoardCard) => {
    const step = stepOf(card.last_activity?.replace(/^searched /, "") ?? "");
    if (step !== null) process.stdout.write(`${card.id} ${step} ${wallNow()}\n`);
  });
  const subscribed = (await socket.timeout(30_000).emitWithAck("board.subscribe", {})) as Ack;
  if (!subscribed.ok) throw new Error(subscribed.error.message);
  process.stdout.write("ready\n");
  process.once("SIGTERM", () => process.exit(0));
}

async function createSession(bridge: Bridge, workspace: string, index: number): Promise<string> {
  const response = await fetch(`${bridge.url}/api/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ workspace, yolo: true, title: `board bench ${index}` }),
  });
  if (response.status !== 201) throw new Error(`creating a session: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

const patternOf = (step: number) => `bench-step-${step}-*`;

function stepOf(pattern: string): number | null {
  const match = /^bench-step-(\d+)-\*$/.exec(pattern);
  return match ? Number(match[1]) : null;
}

if (process.argv[2] === "--tab") {
  await runTab(process.argv[3]);
} else if (isMain(import.meta.url)) {
  printJsonLine(await run());
}
