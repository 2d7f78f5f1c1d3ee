/**
 * `npm run bench`: every benchmark of bench/, one after another (they share two cores, so
 * never in parallel), a human summary, then ONE JSON object as the last line of stdout.
 * Each bench file exports `run()`; a file that is missing or has no `run()` is reported
 * "not measured" and the rest still run; one that throws is reported and the rest still run.
 * Each runs in a process of its own (`run.ts --one <name>`), so no benchmark's heap, compiled
 * code or leftovers weigh on the next one's in-process clients, and a benchmark that times out
 * is stopped with everything it started. See bench/README.md for what each figure means.
 */
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { printJsonLine } from "./lib/cli.ts";
import { round } from "./lib/stats.ts";

type Figures = Record<string, unknown>;

interface Bench {
  name: string;
  file: string;
  what: string;
  /** A benchmark still running after this is reported failed and the run goes on (the whole run must fit in 10 minutes). */
  timeoutS: number;
}

/** In this order: start-up first, since its first start builds the UI that ui-replay opens. */
const BENCHES: Bench[] = [
  // The first start may build the UI: about a minute on 2 idle cores, several on busy ones.
  { name: "startup", file: "./startup.ts", what: "start-up to the ready line", timeoutS: 240 },
  // Packs the tarball (a UI build when stale) and, unless `npm run test:install` left one, installs it (compiles natives).
  {
    name: "installed",
    file: "./installed.ts",
    what: "the installed package: `worldline` in a folder to its ready line",
    timeoutS: 540,
  },
  { name: "acp", file: "./acp.ts", what: "worldline acp: spawn to the first reply chunk", timeoutS: 120 },
  {
    name: "print",
    file: "./print.ts",
    what: "worldline run -p: a reply, and a reply after a shell call",
    timeoutS: 120,
  },
  { name: "ttft", file: "./ttft.ts", what: "time to first token through the bridge", timeoutS: 60 },
  { name: "loop", file: "./loop.ts", what: "agent loop per-step overhead", timeoutS: 60 },
  { name: "checkpoints", file: "./checkpoints.ts", what: "workspace snapshots on 10,000 files", timeoutS: 90 },
  {
    name: "worktrees",
    file: "./worktrees.ts",
    what: "a worktree session on 10,000 files vs git worktree add",
    timeoutS: 120,
  },
  // ~200 MB of files written and committed, three bridges started, six rewinds.
  {
    name: "bigrepo",
    file: "./bigrepo.ts",
    what: "a 25,000-file git repository: first turn's end, rewind",
    timeoutS: 240,
  },
  { name: "sync", file: "./sync.ts", what: "live sync fan-out and 10k-event replay", timeoutS: 90 },
  {
    name: "board",
    file: "./board.ts",
    what: "the board: an event in one of 20 running sessions to a board tab",
    timeoutS: 120,
  },
  { name: "bridges", file: "./bridges.ts", what: "fan-out between two bridges (PostgreSQL + Redis)", timeoutS: 60 },
  // 60 s of flood plus a 100 MB cat and the echo run.
  { name: "pty", file: "./pty.ts", what: "terminal throughput, flood memory, echo", timeoutS: 300 },
  { name: "ui-replay", file: "./ui-replay.ts", what: "opening a 10k-event session in Chromium", timeoutS: 60 },
  { name: "prompt-cache", file: "./prompt-cache.ts", what: "prompt cache reuse over a scripted session", timeoutS: 90 },
  // A 2,000-file TypeScript project: its server's warm-up is most of it (~70 s on a loaded 2-core machine).
  {
    name: "hooks",
    file: "./hooks.ts",
    what: "a PreToolUse hook per tool call; diagnostics after an edit",
    timeoutS: 300,
  },
  // 10,000 files written, a hub and a runner process started, ~250 tool calls, then 13 cats of 50 MB in terminals.
  {
    name: "runners",
    file: "./runners.ts",
    what: "tool calls, grep and terminal throughput through a runner vs locally",
    timeoutS: 180,
  },
  // A bridge, a dev server, 660 GETs and 660 echoes, Chromium launched for 11 screenshots.
  {
    name: "preview",
    file: "./preview.ts",
    what: "the preview proxy's overhead and the browser tool's screenshot",
    timeoutS: 120,
  },
];

interface Target {
  key: string;
  bench: string;
  /** "max": the figure must be at most `limit`; "min": at least. */
  kind: "max" | "min";
  limit: number;
  unit: string;
}

/** The headline figures, each with its target. */
const TARGETS: Target[] = [
  { key: "pty_throughput_ratio", bench: "pty", kind: "min", limit: 0.5, unit: "" },
  { key: "fanout_p99_ms", bench: "sync", kind: "max", limit: 50, unit: "ms" },
  { key: "ttft_overhead_p50_ms", bench: "ttft", kind: "max", limit: 15, unit: "ms" },
  { key: "session_replay_10k_ms", bench: "sync", kind: "max", limit: 1000, unit: "ms" },
  { key: "flood_bridge_rss_mb", bench: "pty", kind: "max", limit: 300, unit: "MB" },
  { key: "snapshot_one_change_ms", bench: "checkpoints", kind: "max", limit: 200, unit: "ms" },
  { key: "session_open_10k_ms", bench: "ui-replay", kind: "max", limit: 1000, unit: "ms" },
  { key: "pty_client_ratio", bench: "pty", kind: "min", limit: 0.9, unit: "" },
  { key: "bridge_cpu_ms_per_mb", bench: "pty", kind: "max", limit: 10, unit: "ms" },
  { key: "startup_ratio", bench: "startup", kind: "max", limit: 3, unit: "" },
  { key: "bridge_step_overhead_ms", bench: "loop", kind: "max", limit: 10, unit: "ms" },
  // From an `npm install -g` of the packed tarball.
  { key: "installed_start_ms", bench: "installed", kind: "max", limit: 3000, unit: "ms" },
  { key: "prompt_cache_reuse", bench: "prompt-cache", kind: "min", limit: 0.99, unit: "" },
  { key: "runner_tool_overhead_ms", bench: "runners", kind: "max", limit: 5, unit: "ms" },
  { key: "runner_grep_ratio", bench: "runners", kind: "max", limit: 1.5, unit: "" },
  { key: "runner_pty_ratio", bench: "runners", kind: "min", limit: 0.8, unit: "" },
  // A worktree session against a bare `git worktree add` of the same repository.
  { key: "worktree_session_create_ratio", bench: "worktrees", kind: "max", limit: 1.5, unit: "" },
  // An event in one of 20 running sessions until a board tab shows it.
  { key: "board_update_p99_ms", bench: "board", kind: "max", limit: 100, unit: "ms" },
  // `worldline acp`'s first reply against a bare Node ACP agent's in the same run.
  { key: "acp_first_reply_ratio", bench: "acp", kind: "max", limit: 2.5, unit: "" },
  // Print mode: what one quick shell call adds to a reply alone.
  { key: "print_shell_step_ms", bench: "print", kind: "max", limit: 60, unit: "ms" },
  // Previews.
  { key: "preview_proxy_overhead_ms", bench: "preview", kind: "max", limit: 3, unit: "ms" },
  { key: "preview_ws_echo_overhead_ms", bench: "preview", kind: "max", limit: 3, unit: "ms" },
  { key: "hook_overhead_ms", bench: "hooks", kind: "max", limit: 15, unit: "ms" },
  // A 25,000-file git repository: the first turn's end after its last token, and a rewind with files.
  { key: "bigrepo_first_turn_end_ms", bench: "bigrepo", kind: "max", limit: 1000, unit: "ms" },
  { key: "bigrepo_rewind_ms", bench: "bigrepo", kind: "max", limit: 1000, unit: "ms" },
];

/** Headline figures without a target in the issue, reported as measured. */
const REPORTED: { key: string; bench: string; unit: string }[] = [
  { key: "startup_ready_ms", bench: "startup", unit: "ms" },
  { key: "startup_first_page_ms", bench: "startup", unit: "ms" },
  { key: "startup_api_ready_ms", bench: "startup", unit: "ms" },
  { key: "installed_first_page_ms", bench: "installed", unit: "ms" },
  { key: "installed_node_baseline_ms", bench: "installed", unit: "ms" },
  { key: "acp_first_reply_ms", bench: "acp", unit: "ms" },
  { key: "acp_node_baseline_ms", bench: "acp", unit: "ms" },
  { key: "print_say_ms", bench: "print", unit: "ms" },
  { key: "print_shell_ms", bench: "print", unit: "ms" },
  { key: "print_node_baseline_ms", bench: "print", unit: "ms" },
  { key: "loop_step_overhead_ms", bench: "loop", unit: "ms" },
  // pty_client_ratio for a bare forwarder in the same run, a bridge with no work of its own.
  { key: "pty_forwarder_client_ratio", bench: "pty", unit: "" },
  // Team mode, an event appended on one bridge until a tab on another has it.
  { key: "bridge_fanout_p50_ms", bench: "bridges", unit: "ms" },
  { key: "bridge_fanout_p99_ms", bench: "bridges", unit: "ms" },
  // Team mode, a key typed on one bridge into a terminal on another until its echo.
  { key: "team_keystroke_echo_p50_ms", bench: "bridges", unit: "ms" },
  // The figure the ratio is made of, and its bare `git worktree add` in the same run.
  { key: "worktree_session_create_ms", bench: "worktrees", unit: "ms" },
  { key: "git_worktree_add_ms", bench: "worktrees", unit: "ms" },
  { key: "browser_screenshot_ms", bench: "preview", unit: "ms" },
  { key: "diagnostics_after_edit_ms", bench: "hooks", unit: "ms" },
];

/** What a benchmark's process reports. */
type Reported = { status: "ok"; figures: Figures } | { status: "not_measured" | "failed"; reason: string };

type Outcome = Reported & { seconds: number };

/** How the child running one benchmark reports back: this prefix, then its outcome as JSON, as its last line. */
const OUTCOME_MARK = "@@bench-outcome ";

/** The child's side: runs one benchmark in this process and prints its outcome. */
async function runOne(name: string): Promise<void> {
  const report = (outcome: Reported): void => {
    process.stdout.write(`${OUTCOME_MARK}${JSON.stringify(outcome)}\n`, () => process.exit(0));
  };
  const bench = BENCHES.find((candidate) => candidate.name === name);
  if (!bench) return report({ status: "not_measured", reason: `no benchmark named ${name}` });
  let module: { run?: () => Promise<Figures> };
  try {
    module = (await import(bench.file)) as typeof module;
  } catch (error) {
    return report({ status: "not_measured", reason: `cannot load ${bench.file}: ${firstLine(error)}` });
  }
  if (typeof module.run !== "function")
    return report({ status: "not_measured", reason: `${bench.file} exports no run()` });
  try {
    report({ status: "ok", figures: await module.run() });
  } catch (error) {
    report({ status: "failed", reason: firstLine(error) });
  }
}

/** Runs one benchmark in a child process (its own process group), passing its output through. */
async function runBench(bench: Bench): Promise<Outcome> {
  const start = performance.now();
  const seconds = () => round((performance.now() - start) / 1000, 1);
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--one", bench.name], {
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  let reported: Reported | null = null;
  let pending = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    const lines = (pending + text).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith(OUTCOME_MARK)) reported = JSON.parse(line.slice(OUTCOME_MARK.length)) as typeof reported;
      else console.log(line);
    }
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stopGroup(child.pid);
  }, bench.timeoutS * 1000);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.once("close", (...exit) => resolve(exit)),
  );
  clearTimeout(timer);
  if (pending) console.log(pending);
  // Whatever the benchmark left running (a bridge it did not stop) goes with it.
  stopGroup(child.pid);
  const outcome: Reported = reported ?? {
    status: "failed",
    reason: timedOut ? `timed out after ${bench.timeoutS} s` : `exited (${code ?? signal}) before reporting`,
  };
  return { ...outcome, seconds: seconds() };
}

function stopGroup(pid: number | undefined): void {
  try {
    if (pid) process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0];
}

function verdict(target: Target, value: unknown): "ok" | "MISSED" | "not measured" {
  if (typeof value !== "number" || Number.isNaN(value)) return "not measured";
  return (target.kind === "max" ? value <= target.limit : value >= target.limit) ? "ok" : "MISSED";
}

async function main(): Promise<void> {
  const started = performance.now();
  // One UI build for the whole run, in its own folder so it never collides with another build.
  process.env.WORLDLINE_NEXT_DIST ??= ".next-bench";
  const outcomes = new Map<string, Outcome>();
  // WL_BENCH_ONLY=ttft,loop runs a subset (the others are reported "not measured").
  const only = process.env.WL_BENCH_ONLY?.split(",").map((name) => name.trim());
  for (const bench of BENCHES) {
    if (only && !only.includes(bench.name)) {
      outcomes.set(bench.name, { status: "not_measured", reason: "left out by WL_BENCH_ONLY", seconds: 0 });
      continue;
    }
    console.log(`\n▶ ${bench.name}: ${bench.what}…`);
    const outcome = await runBench(bench);
    outcomes.set(bench.name, outcome);
    if (outcome.status === "ok") {
      for (const [key, value] of Object.entries(outcome.figures)) console.log(`    ${key}: ${JSON.stringify(value)}`);
      console.log(`  done in ${outcome.seconds} s`);
    } else {
      console.log(`  ${outcome.status === "failed" ? "FAILED" : "not measured"}: ${outcome.reason}`);
    }
  }

  const figure = (bench: string, key: string): unknown => {
    const outcome = outcomes.get(bench);
    return outcome?.status === "ok" ? outcome.figures[key] : undefined;
  };
  const headline: Figures = {};
  console.log("\nSummary (each figure against its target):");
  const missed: string[] = [];
  const unmeasured: string[] = [];
  for (const target of TARGETS) {
    const value = figure(target.bench, target.key);
    const result = verdict(target, value);
    if (result === "MISSED") missed.push(target.key);
    if (result === "not measured") unmeasured.push(target.key);
    headline[target.key] = typeof value === "number" ? value : null;
    const bound = `${target.kind === "max" ? "≤" : "≥"} ${target.limit}${target.unit ? ` ${target.unit}` : ""}`;
    console.log(
      `  ${result === "ok" ? "✓" : "✗"} ${target.key.padEnd(26)} ${String(value ?? "—").padStart(9)} ${target.unit.padEnd(3)} (target ${bound}: ${result})`,
    );
  }
  for (const reported of REPORTED) {
    const value = figure(reported.bench, reported.key);
    headline[reported.key] = typeof value === "number" ? value : null;
    console.log(`  · ${reported.key.padEnd(26)} ${String(value ?? "—").padStart(9)} ${reported.unit}`);
  }
  const notRun = [...outcomes].filter(([, outcome]) => outcome.status !== "ok");
  for (const [name, outcome] of notRun)
    console.log(
      `  ! ${name}: ${outcome.status === "failed" ? "FAILED" : "not measured"} (${"reason" in outcome ? outcome.reason : ""})`,
    );
  const seconds = round((performance.now() - started) / 1000, 1);
  console.log(`  whole run: ${seconds} s`);

  printJsonLine({
    ...headline,
    targets_met: missed.length === 0 && unmeasured.length === 0,
    missed,
    not_measured: notRun.map(([name]) => name),
    total_seconds: seconds,
    details: Object.fromEntries(
      [...outcomes].map(([name, outcome]) => [
        name,
        outcome.status === "ok" ? outcome.figures : { [outcome.status]: outcome.reason },
      ]),
    ),
  });
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
  process.exit(notRun.some(([, outcome]) => outcome.status === "failed") ? 1 : 0);
}

const one = process.argv.indexOf("--one");
if (one >= 0) await runOne(process.argv[one + 1] ?? "");
else await main();
