/**
 * Runners: what a workspace on another machine costs a tool call, on loopback. A real
 * bridge (the hub) and a real `worldline runner` process; the same tool objects run once with
 * the session's host set to the runner and once on this machine.
 * - `runner_tool_overhead_ms`: p50 of read_file and of `shell echo` through the runner minus the
 *   same locally, the larger of the two (target ≤ 5 ms).
 * - `runner_grep_ratio`: grep over 10,000 files through the runner ÷ locally (target ≤ 1.5).
 * - `runner_pty_ratio`: a `cat` of a file in a terminal of a session on the runner ÷ the same in a
 *   terminal of a session on this machine, to the same client (bench/pty.ts's headless xterm that
 *   acks as the page does). Paired like bench/pty.ts: each runner run over the mean of the local
 *   runs just before and after it, the median of those (target ≥ 0.8).
 * Run alone with `npx tsx bench/runners.ts`; the last line is one JSON object.
 * Env: WL_BENCH_RUNNER_PTY_MB (the cat's size, default 50) for a quick check.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../server/config/index.ts";
import type { WorkspaceHost } from "../server/host/index.ts";
import { startBridge, type Bridge } from "../server/main.ts";
import { createGrepTool, createShellTool, type Tool } from "../server/tools/index.ts";
import { readFileTool } from "../server/tools/read-file.ts";
import type { ToolContext } from "../server/tools/types.ts";
import type { PtyViewer } from "../tests/integration/pty/pty-client";
import { connectSocket } from "./lib/bridge-child.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { writeTextFile } from "./lib/pty-baselines.ts";
import { CAT_COMMAND, openViewer, timedCat } from "./lib/pty-cat.ts";
import { median, round } from "./lib/stats.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Calls per tool and place; the p50 of these. */
const CALLS = 60;
/** Calls before measuring: the first of each warms code paths and the runner's connection. */
const WARMUP = 10;
/** The grep target's workspace size. */
const GREP_FILES = 10_000;
const FILES_PER_DIR = 100;
/** Grep runs per place; each walks all 10,000 files. */
const GREP_RUNS = 5;
/** Size of the file each terminal run cats. */
const PTY_MB = Number(process.env.WL_BENCH_RUNNER_PTY_MB ?? 50);
/** Runner terminal runs, each between two local ones; odd, so the median is one of them. */
const PTY_PAIRED_PASSES = 5;

interface RunnerBenchResult {
  runner_read_file_p50_ms: number;
  local_read_file_p50_ms: number;
  runner_shell_p50_ms: number;
  local_shell_p50_ms: number;
  runner_tool_overhead_ms: number;
  runner_grep_ms: number;
  local_grep_ms: number;
  runner_grep_ratio: number;
  runner_pty_mb: number;
  runner_pty_runs_mb_per_s: number[];
  local_pty_runs_mb_per_s: number[];
  runner_pty_ratio: number;
  /** The runner process's CPU per MB of terminal output (reading its pty, batching, sending). */
  runner_pty_cpu_ms_per_mb: number;
}

function context(cwd: string, host: WorkspaceHost | undefined, call: number): ToolContext {
  return {
    cwd,
    host,
    signal: new AbortController().signal,
    sessionId: "bench",
    toolCallId: `call-${call}`,
    emit: () => undefined,
  };
}

async function timeCalls(tool: Tool, args: unknown, cwd: string, host: WorkspaceHost | undefined, calls: number) {
  const samples: number[] = [];
  for (let call = 0; call < calls; call++) {
    const ctx = context(cwd, host, call);
    const start = performance.now();
    // As the loop runs a tool: its approval check, then the run (which checks the target again).
    await tool.needsApproval(args, ctx);
    const result = await tool.run(args, ctx);
    samples.push(performance.now() - start);
    if (result.isError) throw new Error(`${tool.name} failed: ${result.output}`);
  }
  return samples;
}

async function p50(tool: Tool, args: unknown, cwd: string, host: WorkspaceHost | undefined): Promise<number> {
  await timeCalls(tool, args, cwd, host, WARMUP);
  return median(await timeCalls(tool, args, cwd, host, CALLS));
}

/** Terminal throughput on the runner against this machine's, paired (see the header). */
async function ptyRatio(bridge: Bridge, ws: string, runnerPid: number) {
  const file = path.join(ws, "cat.txt");
  writeTextFile(file, PTY_MB);
  const sessions = bridge.services.sessions;
  const socket = await connectSocket(bridge.url, bridge.token);
  const here = await openViewer(socket, (await sessions.create({ workspace: ws })).id, { keepBytes: false });
  const there = await openViewer(socket, (await sessions.create({ workspace: ws, runner: "bench" })).id, {
    keepBytes: false,
  });
  // The runner's terminals are timed with the runner process's CPU, the local ones with this process's (the hub's).
  const runnerCpu: number[] = [];
  const cat = async (viewer: PtyViewer) => {
    const onRunner = viewer === there;
    const run = await timedCat(viewer, onRunner ? runnerPid : process.pid, () =>
      viewer.input(`${CAT_COMMAND(file)}\r`),
    );
    if (onRunner) runnerCpu.push(run.serverCpuMsPerMb);
    return run.rate;
  };
  try {
    // Warm: the first cat of each pays for the file's first read and the viewers' first parse.
    await cat(here);
    await cat(there);
    const local = [await cat(here)];
    const runner: number[] = [];
    for (let pass = 0; pass < PTY_PAIRED_PASSES; pass++) {
      runner.push(await cat(there));
      local.push(await cat(here));
    }
    const ratios = runner.map((rate, pass) => rate / ((local[pass] + local[pass + 1]) / 2));
    return { local, runner, ratio: median(ratios), runnerCpuMsPerMb: median(runnerCpu) };
  } finally {
    here.dispose();
    there.dispose();
    socket.disconnect();
  }
}

export async function run(): Promise<RunnerBenchResult> {
  const scratch = mkdtempSync(path.join(tmpdir(), "wl-bench-runners-"));
  const workspace = realpathSync(scratch);
  const ws = path.join(workspace, "ws");
  for (let dir = 0; dir < GREP_FILES / FILES_PER_DIR; dir++)
    mkdirSync(path.join(ws, `src/mod${dir}`), { recursive: true });
  for (let i = 0; i < GREP_FILES; i++) {
    const body = Array.from({ length: 30 }, (_, line) => `export const v${line} = ${i * 31 + line};`).join("\n");
    writeFileSync(
      path.join(ws, `src/mod${Math.floor(i / FILES_PER_DIR)}/f${i}.ts`),
      `${body}\n${i % 500 === 0 ? "// needle\n" : ""}`,
    );
  }
  writeFileSync(path.join(ws, "a.txt"), Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n"));
  const bridge = await startBridge({
    config: loadConfig({
      PORT: "0",
      WORLDLINE_HOME: path.join(workspace, "hub"),
      WORLDLINE_TOKEN: "bench-token-0123456789",
    }),
    ui: false,
  });
  const hub = bridge.services.runners!;
  const token = await hub.add("bench");
  const runner = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      path.join(ROOT, "server/cli/index.ts"),
      "runner",
      "--hub",
      bridge.url,
      "--token",
      token,
      "--root",
      ws,
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        WORLDLINE_HOME: path.join(workspace, "runner"),
        NODE_ENV: "production",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      let out = "";
      runner.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        if (out.includes("connected to")) resolve();
      });
      runner.once("exit", (code) => reject(new Error(`the runner exited (${code}) before connecting`)));
    });
    const remote = hub.hostFor("bench");
    const shell = createShellTool();
    const grep = createGrepTool();
    const read = { path: "a.txt" };
    const echo = { command: "echo hello" };
    const localRead = await p50(readFileTool, read, ws, undefined);
    const runnerRead = await p50(readFileTool, read, ws, remote);
    const localShell = await p50(shell, echo, ws, undefined);
    const runnerShell = await p50(shell, echo, ws, remote);
    const needle = { pattern: "needle", max_results: 1000 };
    await timeCalls(grep, needle, ws, undefined, 1);
    const localGrep = median(await timeCalls(grep, needle, ws, undefined, GREP_RUNS));
    await timeCalls(grep, needle, ws, remote, 1);
    const runnerGrep = median(await timeCalls(grep, needle, ws, remote, GREP_RUNS));
    const pty = await ptyRatio(bridge, ws, runner.pid!);
    return {
      runner_read_file_p50_ms: round(runnerRead),
      local_read_file_p50_ms: round(localRead),
      runner_shell_p50_ms: round(runnerShell),
      local_shell_p50_ms: round(localShell),
      runner_tool_overhead_ms: round(Math.max(runnerRead - localRead, runnerShell - localShell)),
      runner_grep_ms: round(runnerGrep),
      local_grep_ms: round(localGrep),
      runner_grep_ratio: round(runnerGrep / localGrep),
      runner_pty_mb: PTY_MB,
      runner_pty_runs_mb_per_s: pty.runner.map((rate) => round(rate)),
      local_pty_runs_mb_per_s: pty.local.map((rate) => round(rate)),
      runner_pty_ratio: round(pty.ratio),
      runner_pty_cpu_ms_per_mb: round(pty.runnerCpuMsPerMb),
    };
  } finally {
    runner.kill("SIGKILL");
    await bridge.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) printJsonLine(await run());
