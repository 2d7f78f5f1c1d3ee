/**
 * Print mode (`worldline run -p`): the whole process, spawn to exit, as a script or a CI job
 * waits for it. Two flows on the scripted fake LLM (in its own process, as a real provider is):
 * a reply alone (`print_say_ms`), and one quick shell call then the reply (`print_shell_ms`).
 * Each run's three commands go in turn (bare Node, say, shell) so drift on a shared machine
 * weighs on all three alike; medians of RUNS, each with a fresh data dir. `print_shell_step_ms`
 * is what the shell step adds (shell minus say, pair by pair). Run with `npx tsx bench/print.ts`.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ROOT } from "./lib/bridge-child.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { startFakeLlmProcess, type FakeLlmProcess } from "./lib/fake-llm-child.ts";
import { median, round } from "./lib/stats.ts";

const RUNS = Number(process.env.WL_BENCH_PRINT_RUNS ?? 7);
const RUN_TIMEOUT_MS = 60_000;

export interface PrintBenchResult {
  runs: number;
  print_say_ms: number;
  print_shell_ms: number;
  print_shell_step_ms: number;
  print_node_baseline_ms: number;
  print_say_ratio: number;
  print_shell_ratio: number;
}

export async function run(): Promise<PrintBenchResult> {
  const fake = await startFakeLlmProcess();
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-print-ws-")));
  const samples: { node: number; say: number; shell: number }[] = [];
  try {
    // One warm-up of each (disk cache, the fake's first request), not counted.
    await timed(process.execPath, ["-e", "process.stdout.write('x')"]);
    await printRun(fake, workspace, "say");
    await printRun(fake, workspace, "shell");
    for (let i = 0; i < RUNS; i++) {
      const node = await timed(process.execPath, ["-e", "process.stdout.write('x')"]);
      const say = await printRun(fake, workspace, "say");
      const shell = await printRun(fake, workspace, "shell");
      samples.push({ node, say, shell });
    }
  } finally {
    await fake.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
  const node = median(samples.map((s) => s.node));
  const say = median(samples.map((s) => s.say));
  const shell = median(samples.map((s) => s.shell));
  return {
    runs: samples.length,
    print_say_ms: Math.round(say),
    print_shell_ms: Math.round(shell),
    print_shell_step_ms: Math.round(median(samples.map((s) => s.shell - s.say))),
    print_node_baseline_ms: Math.round(node),
    print_say_ratio: round(median(samples.map((s) => s.say / s.node))),
    print_shell_ratio: round(median(samples.map((s) => s.shell / s.node))),
  };
}

async function printRun(fake: FakeLlmProcess, workspace: string, flow: "say" | "shell"): Promise<number> {
  const reply = { text: "Hello from the fake model." };
  if (flow === "say") await fake.script(reply);
  else await fake.script({ toolCalls: [{ name: "shell", arguments: { command: "echo hi" } }] }, reply);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-print-home-"));
  try {
    const prompt = flow === "say" ? "Say hello." : "Run echo hi, then say hello.";
    return await timed(process.execPath, [path.join(ROOT, "bin/worldline.mjs"), "run", "--yolo", "-p", prompt], {
      cwd: workspace,
      env: {
        ...process.env,
        PORT: "",
        WORLDLINE_TOKEN: "",
        WORLDLINE_HOME: home,
        OPENAI_BASE_URL: fake.url,
        OPENAI_API_KEY: "bench",
        WORLDLINE_MODEL: "fake-model",
      },
    });
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** Spawn to exit in ms; throws with the command's stderr unless it exits 0. */
function timed(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return new Promise<number>((resolve, reject) => {
    const start = performance.now();
    const child = spawn(command, args, { ...options, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const timeout = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      clearTimeout(timeout);
      const ms = performance.now() - start;
      if (code === 0) resolve(ms);
      else reject(new Error(`${path.basename(args[args.length - 1])}: exit ${code ?? signal}; stderr:\n${stderr}`));
    });
  });
}

if (isMain(import.meta.url)) {
  const result = await run();
  process.stderr.write(
    `print mode: a reply ${result.print_say_ms} ms, after a shell call ${result.print_shell_ms} ms ` +
      `(the step ${result.print_shell_step_ms} ms), bare Node ${result.print_node_baseline_ms} ms\n`,
  );
  printJsonLine(result);
}
