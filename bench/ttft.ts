/**
 * Time to first token: a prompt sent over socket.io until the first
 * `message.part.delta` of the answer comes back, minus the time to the first content
 * delta of a direct streaming call (the same `openai` client the bridge uses) to the same
 * fake LLM, in the same run. The bridge and the fake LLM each run in their own process;
 * the two measurements alternate so that noise on the shared machine hits both alike.
 * Run with `npx tsx bench/ttft.ts`; the last line printed is one JSON object.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import OpenAI from "openai";
import type { Socket } from "socket.io-client";
import type { EventEnvelope } from "../server/protocol/index.ts";
import { command, connectSocket, startBridgeProcess } from "./lib/bridge-child.ts";
import { startFakeLlmProcess } from "./lib/fake-llm-child.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { median, percentile, round, sleep } from "./lib/stats.ts";

/** Measured prompts, from the brief (~30); the median needs no more on a quiet bridge. */
const RUNS = Number(process.env.WL_BENCH_TTFT_RUNS ?? 30);
/** Unmeasured prompts first: JIT, the shadow repository's creation, SQLite's page cache. */
const WARMUP_RUNS = 3;
/** The scripted answer: long enough to stream several deltas after the first. */
/** Idle time between prompts: a user reads the answer before typing the next one (the turn-end snapshot runs then). */
const PAUSE_MS = 200;
const ANSWER = "The first token matters most: it tells the user the agent is alive. ".repeat(4);

export interface TtftBenchResult {
  runs: number;
  direct_first_delta_p50_ms: number;
  bridge_first_delta_p50_ms: number;
  bridge_first_delta_p95_ms: number;
  ttft_overhead_p50_ms: number;
}

export async function run(): Promise<TtftBenchResult> {
  // In its own process, like a real provider: the baseline crosses a process boundary too.
  const fake = await startFakeLlmProcess();
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-ttft-")));
  fs.writeFileSync(path.join(workspace, "README.md"), "# A small project\n");
  const bridge = await startBridgeProcess({
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: "x",
    WORLDLINE_MODEL: "fake-model",
  });
  const client = new OpenAI({ baseURL: fake.url, apiKey: "x", maxRetries: 0 });
  let socket: Socket | undefined;
  try {
    socket = await connectSocket(bridge.url, bridge.token);
    const session = await createSession(bridge.url, bridge.token, workspace);
    const deltas = firstDeltaWatcher(socket, session.id);
    await command(socket, "session.subscribe", { sessionId: session.id });

    const direct: number[] = [];
    const through: number[] = [];
    for (let i = 0; i < WARMUP_RUNS + RUNS; i++) {
      await fake.script({ text: ANSWER }, { text: ANSWER });
      const directMs = await directFirstDelta(client);
      const bridgeMs = await deltas.time(() =>
        command(socket as Socket, "turn.prompt", { sessionId: session.id, text: `question ${i}` }),
      );
      await deltas.turnDone();
      await sleep(PAUSE_MS);
      if (i < WARMUP_RUNS) continue;
      direct.push(directMs);
      through.push(bridgeMs);
    }
    const directP50 = median(direct);
    const bridgeP50 = median(through);
    return {
      runs: RUNS,
      direct_first_delta_p50_ms: round(directP50),
      bridge_first_delta_p50_ms: round(bridgeP50),
      bridge_first_delta_p95_ms: round(percentile(through, 95)),
      ttft_overhead_p50_ms: round(bridgeP50 - directP50),
    };
  } finally {
    socket?.disconnect();
    await bridge.stop();
    await fake.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

async function createSession(url: string, token: string, workspace: string): Promise<{ id: string }> {
  const response = await fetch(`${url}/api/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ workspace }),
  });
  if (!response.ok) throw new Error(`POST /sessions: ${response.status} ${await response.text()}`);
  return (await response.json()) as { id: string };
}

/** From the request to the first chunk carrying content, then drained like the bridge does. */
async function directFirstDelta(client: OpenAI): Promise<number> {
  const start = performance.now();
  const stream = await client.chat.completions.create({
    model: "fake-model",
    messages: [{ role: "user", content: "question" }],
    stream: true,
  });
  let first = Number.NaN;
  for await (const chunk of stream) {
    if (Number.isNaN(first) && chunk.choices[0]?.delta?.content) first = performance.now() - start;
  }
  if (Number.isNaN(first)) throw new Error("the direct call streamed no content");
  return first;
}

/** Times from an action to the session's next text delta, and waits for turn ends. */
function firstDeltaWatcher(socket: Socket, sessionId: string) {
  let onDelta: (() => void) | null = null;
  let onDone: (() => void) | null = null;
  let completedTurns = 0;
  socket.on("session.events", (message: { sessionId: string; events: EventEnvelope[] }) => {
    if (message.sessionId !== sessionId) return;
    for (const event of message.events) {
      if (event.type === "message.part.delta" && event.payload.part === "text" && onDelta) {
        onDelta();
        onDelta = null;
      }
      if (event.type === "turn.completed") {
        completedTurns++;
        onDone?.();
      }
    }
  });
  let awaited = 0;
  return {
    async time(action: () => Promise<unknown>): Promise<number> {
      const start = performance.now();
      const arrived = new Promise<number>((resolve) => (onDelta = () => resolve(performance.now() - start)));
      await action();
      return arrived;
    },
    turnDone(): Promise<void> {
      awaited++;
      if (completedTurns >= awaited) return Promise.resolve();
      return new Promise((resolve) => {
        onDone = () => {
          if (completedTurns >= awaited) {
            onDone = null;
            resolve();
          }
        };
      });
    },
  };
}

if (isMain(import.meta.url)) {
  const result = await run();
  console.log(`Time to first token (p50 of ${result.runs} prompts):`);
  console.log(`  direct streaming call to the fake LLM:  ${result.direct_first_delta_p50_ms} ms`);
  console.log(
    `  prompt over socket.io → first delta:    ${result.bridge_first_delta_p50_ms} ms (p95 ${result.bridge_first_delta_p95_ms} ms)`,
  );
  console.log(`  overhead of the bridge:                 ${result.ttft_overhead_p50_ms} ms (target ≤ 15)`);
  printJsonLine(result);
}
