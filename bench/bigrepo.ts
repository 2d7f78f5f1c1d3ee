/**
 * A real repository costs nothing extra: a generated 25,000-file git repository (one commit),
 * a bridge in its own process and the fake LLM in another.
 *   bigrepo_first_turn_end_ms — a new session's first turn (a reply alone): its last text delta
 *     until `turn.completed`, which waits for the workspace's first snapshot; each run a fresh
 *     bridge with a fresh data dir (so a fresh shadow repository), median of RUNS.
 *   bigrepo_rewind_ms — `POST …/rewind {files, conversation}` back over a turn whose shell call
 *     rewrote REWIND_FILES files, alternating with `POST …/rewind/undo`; median of every one.
 * The repository is generated once per run into a temp folder and shared by both figures.
 * Run alone with `npx tsx bench/bigrepo.ts`; the last line printed is one JSON object.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import type { Socket } from "socket.io-client";
import type { EventEnvelope } from "../server/protocol/index.ts";
import { command, connectSocket, startBridgeProcess, type BridgeProcess } from "./lib/bridge-child.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { startFakeLlmProcess, type FakeLlmProcess } from "./lib/fake-llm-child.ts";
import { median, round } from "./lib/stats.ts";

const exec = promisify(execFile);

/** The repository size from the target (a real one had 27,000 files, 373 MB). */
const FILE_COUNT = 25_000;
/** Folders of a plausible source tree: 40 packages of 25 modules. */
const PACKAGES = 40;
const MODULES = 25;
/** First turns measured, each on a fresh bridge and data dir. `WL_BENCH_BIGREPO_RUNS` changes it. */
const RUNS = Number(process.env.WL_BENCH_BIGREPO_RUNS ?? 3);
/** Rewinds measured (and as many undos between them). */
const REWINDS = 3;
/** Files the rewound turn's shell call rewrites. */
const REWIND_FILES = 20;
const REPLY = "Here is what I found in the repository.";

export interface BigRepoBenchResult {
  files: number;
  repo_bytes_mb: number;
  bigrepo_first_turn_end_ms: number;
  bigrepo_first_turn_end_runs_ms: number[];
  bigrepo_rewind_ms: number;
  bigrepo_rewind_runs_ms: number[];
}

const filePath = (i: number) => `pkg${i % PACKAGES}/mod${Math.floor(i / PACKAGES) % MODULES}/file${i}.py`;

/** Files of 40–340 lines (~7.5 KB on average), like a Python project's modules. */
function fileBody(i: number): string {
  const lines = [`# module ${i}`];
  for (let line = 0; line < 40 + (i % 300); line++)
    lines.push(`    value_${line} = compute(${i}, ${line}, "${i * line}")`);
  return `${lines.join("\n")}\n`;
}

async function makeRepo(root: string): Promise<{ repo: string; bytes: number }> {
  const repo = path.join(root, "repo");
  let bytes = 0;
  for (let i = 0; i < FILE_COUNT; i++) {
    const file = path.join(repo, filePath(i));
    if (i < PACKAGES * MODULES) fs.mkdirSync(path.dirname(file), { recursive: true });
    const body = fileBody(i);
    bytes += body.length;
    fs.writeFileSync(file, body);
  }
  const git = (...args: string[]) =>
    exec("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.test", ...args], { cwd: repo });
  await git("init", "-q", "-b", "main");
  await git("add", "-A");
  await git("commit", "-q", "-m", `${FILE_COUNT} files`);
  return { repo, bytes };
}

export async function run(): Promise<BigRepoBenchResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-bigrepo-"));
  const fake = await startFakeLlmProcess();
  try {
    const { repo, bytes } = await makeRepo(root);
    process.stderr.write(`bigrepo: ${FILE_COUNT}-file repository committed (${Math.round(bytes / 2 ** 20)} MB)\n`);
    const firstTurns: number[] = [];
    const rewinds: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const last = i === RUNS - 1;
      const { ms, bridge, socket, sessionId } = await firstTurn(fake, repo);
      try {
        firstTurns.push(ms);
        process.stderr.write(`bigrepo: first turn ended ${round(ms)} ms after its last token\n`);
        if (last) rewinds.push(...(await rewindRuns(fake, bridge, socket, sessionId, repo)));
      } finally {
        socket.disconnect();
        await bridge.stop();
      }
    }
    return {
      files: FILE_COUNT,
      repo_bytes_mb: Math.round(bytes / 2 ** 20),
      bigrepo_first_turn_end_ms: round(median(firstTurns)),
      bigrepo_first_turn_end_runs_ms: firstTurns.map((ms) => round(ms)),
      bigrepo_rewind_ms: round(median(rewinds)),
      bigrepo_rewind_runs_ms: rewinds.map((ms) => round(ms)),
    };
  } finally {
    await fake.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** A fresh bridge, a session in `repo`, one prompt: its last text delta until the turn completes. */
async function firstTurn(fake: FakeLlmProcess, repo: string) {
  const bridge = await startBridgeProcess({
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: "bench",
    WORLDLINE_MODEL: "fake-model",
  });
  const socket = await connectSocket(bridge.url, bridge.token);
  const sessionId = (await api<{ id: string }>(bridge, "POST", "/sessions", { workspace: repo, yolo: true })).id;
  const turns = turnWatcher(socket, sessionId);
  await command(socket, "session.subscribe", { sessionId });
  await fake.script({ text: REPLY });
  const { lastDelta, completed } = await turns.next(() =>
    command(socket, "turn.prompt", { sessionId, text: "What is in here?" }),
  );
  return { ms: completed - lastDelta, bridge, socket, sessionId };
}

/** A turn whose shell call rewrites REWIND_FILES files, then rewinds over it and undoes, timed. */
async function rewindRuns(
  fake: FakeLlmProcess,
  bridge: BridgeProcess,
  socket: Socket,
  sessionId: string,
  repo: string,
): Promise<number[]> {
  const paths = Array.from({ length: REWIND_FILES }, (_, k) => filePath(k * 997));
  const rewrite = paths.map((file) => `echo "# rewritten by the agent" >> ${file}`).join(" && ");
  await fake.script({ toolCalls: [{ name: "shell", arguments: { command: rewrite } }] }, { text: "Done." });
  const turns = turnWatcher(socket, sessionId);
  const checkpoints = await api<{ id: string; reason: string }[]>(bridge, "GET", `/sessions/${sessionId}/checkpoints`);
  await turns.next(() => command(socket, "turn.prompt", { sessionId, text: "Mark the files." }));
  const changed = fs.readFileSync(path.join(repo, paths[0]), "utf8");
  if (!changed.includes("rewritten by the agent")) throw new Error("the agent's shell call changed nothing");
  // The checkpoint at the start of the second turn: the first one after the first turn's.
  const after = await api<{ id: string; reason: string }[]>(bridge, "GET", `/sessions/${sessionId}/checkpoints`);
  const target = after[checkpoints.length];
  if (target?.reason !== "turn") throw new Error(`expected the second turn's checkpoint, got ${target?.reason}`);

  const samples: number[] = [];
  for (let i = 0; i < REWINDS; i++) {
    const rewind = await timed(() =>
      api<{ written: string[] }>(bridge, "POST", `/sessions/${sessionId}/rewind`, {
        checkpoint: target.id,
        files: true,
        conversation: true,
      }),
    );
    if (rewind.result.written.length !== REWIND_FILES)
      throw new Error(`the rewind wrote ${rewind.result.written.length} files, not ${REWIND_FILES}`);
    const undo = await timed(() =>
      api<{ written: string[] }>(bridge, "POST", `/sessions/${sessionId}/rewind/undo`, {}),
    );
    samples.push(rewind.ms, undo.ms);
  }
  return samples;
}

async function timed<T>(action: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const start = performance.now();
  const result = await action();
  return { ms: performance.now() - start, result };
}

async function api<T>(bridge: BridgeProcess, method: string, route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${bridge.url}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** The next turn of a session: when its last text delta and its `turn.completed` arrived. */
function turnWatcher(socket: Socket, sessionId: string) {
  return {
    next(action: () => Promise<unknown>): Promise<{ lastDelta: number; completed: number }> {
      return new Promise((resolve, reject) => {
        let lastDelta = Number.NaN;
        const listener = (message: { sessionId: string; events: EventEnvelope[] }) => {
          if (message.sessionId !== sessionId) return;
          const now = performance.now();
          for (const event of message.events) {
            if (event.type === "message.part.delta" && event.payload.part === "text") lastDelta = now;
            if (event.type === "turn.completed") {
              socket.off("session.events", listener);
              resolve({ lastDelta, completed: now });
            }
          }
        };
        socket.on("session.events", listener);
        action().catch(reject);
      });
    },
  };
}

if (isMain(import.meta.url)) {
  const result = await run();
  process.stderr.write(
    `bigrepo (${result.files} files, ${result.repo_bytes_mb} MB): first turn ends ${result.bigrepo_first_turn_end_ms} ms ` +
      `after its last token (target ≤ 1000), a rewind ${result.bigrepo_rewind_ms} ms (target ≤ 1000)\n`,
  );
  printJsonLine(result);
}
