/**
 * Start-up benchmark: time from spawning `node bin/worldline.mjs serve` (what
 * `npm start` runs) to its `Worldline ready:` line, with the production UI and the bundled
 * bridge already built —
 * the first start builds what is missing and is reported apart. Also the API-only bridge
 * (no Next.js) and, as the baseline of the same run, a bare Node process with the same
 * TypeScript loader printing a line. Run with `npx tsx bench/startup.ts`.
 * Env: WORLDLINE_NEXT_DIST picks the build folder (default .next-bench, shared with
 * bench/ui-replay.ts when run from bench/run.ts).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { BENCH_TOKEN, firstLine, ROOT, startBridgeProcess, stopChild } from "./lib/bridge-child.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { median, round } from "./lib/stats.ts";

/** Warm starts measured; each is a few seconds, the median of three hides one slow one. */
const RUNS = 3;
/** The first start may run `next build` (about a minute on 2 cores, more when they are busy). */
const FIRST_START_TIMEOUT_MS = 8 * 60_000;
const READY_TIMEOUT_MS = 60_000;
/** Starts that rebuild because someone edited the UI meanwhile are retried this often. */
const MAX_REBUILDS = 3;
/** What `worldline serve` logs when it runs `next build` (server/cli/build.ts). */
const BUILD_LOG = "Building the web UI";
/** What bin/bundle.mjs logs when it bundles the bridge (sources changed). */
const BUNDLE_LOG = "Bundled the bridge";

export interface StartupBenchResult {
  /** The first start, including a build when the UI was not built yet. */
  first_start_ms: number;
  first_start_built: boolean;
  /** Warm starts that rebuilt anyway because sources changed meanwhile; not counted. */
  warm_starts_discarded: number;
  startup_ready_ms: number;
  /** Spawn until the UI's page has been served (Next.js loads after the ready line; a page asked for sooner waits). */
  startup_first_page_ms: number;
  startup_api_ready_ms: number;
  node_baseline_ms: number;
  /** startup_ready_ms over node_baseline_ms (at most 3). */
  startup_ratio: number;
  /** Node alone printing a line, no loader: the absolute floor, for reference. */
  node_plain_baseline_ms: number;
}

export async function run(): Promise<StartupBenchResult> {
  process.env.WORLDLINE_NEXT_DIST ??= ".next-bench";
  const first = await serveOnce(FIRST_START_TIMEOUT_MS);

  // A start that rebuilt (sources edited meanwhile, as in a shared working tree) is not a warm start.
  const ui: number[] = [];
  const firstPage: number[] = [];
  let rebuilds = 0;
  while (ui.length < RUNS) {
    const start = await serveOnce(FIRST_START_TIMEOUT_MS);
    if (!start.built) {
      ui.push(start.ms);
      firstPage.push(start.pageMs);
    } else if (++rebuilds > MAX_REBUILDS)
      throw new Error("the UI was rebuilt at every start: its sources keep changing");
  }
  const api: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const bridge = await startBridgeProcess();
    api.push(bridge.readyMs);
    await bridge.stop();
  }
  const baseline: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    baseline.push(await bareNode(["--import", "tsx"]));
    plain.push(await bareNode([]));
  }
  return {
    first_start_ms: Math.round(first.ms),
    first_start_built: first.built,
    warm_starts_discarded: rebuilds,
    startup_ready_ms: Math.round(median(ui)),
    startup_first_page_ms: Math.round(median(firstPage)),
    startup_api_ready_ms: Math.round(median(api)),
    node_baseline_ms: round(median(baseline), 1),
    startup_ratio: round(median(ui) / median(baseline), 2),
    node_plain_baseline_ms: round(median(plain), 1),
  };
}

/** `worldline serve` on a free port with a fresh data dir: spawn → ready line, and → the page served. */
async function serveOnce(timeoutMs: number): Promise<{ ms: number; pageMs: number; built: boolean }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-start-"));
  const start = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, "bin/worldline.mjs"), "serve"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", WORLDLINE_HOME: home, WORLDLINE_TOKEN: BENCH_TOKEN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let errors = "";
  let built = false;
  child.stderr?.on("data", (data: Buffer) => {
    errors = (errors + data.toString()).slice(-4000);
    if (errors.includes(BUILD_LOG) || errors.includes(BUNDLE_LOG)) built = true;
  });
  try {
    const line = await firstLine(child, timeoutMs, (line) => line.startsWith("Worldline ready: "));
    const ms = performance.now() - start;
    const url = new URL(line.slice("Worldline ready: ".length).trim());
    const page = await fetch(`${url.origin}/`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } });
    await page.text();
    if (page.status !== 200) throw new Error(`the page answered ${page.status}`);
    return { ms, pageMs: performance.now() - start, built };
  } catch (error) {
    throw new Error(`${(error as Error).message}; its stderr ended with:\n${errors}`);
  } finally {
    await stopChild(child);
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/**
 * The baseline of startup_ratio: Node with the tsx loader printing one line.
 * The bridge no longer runs through tsx (it is bundled), but the target was set on this floor.
 */
async function bareNode(flags: string[]): Promise<number> {
  const start = performance.now();
  const child = spawn(process.execPath, [...flags, "-e", "console.log('ready')"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  await firstLine(child, READY_TIMEOUT_MS);
  const ms = performance.now() - start;
  await stopChild(child);
  return ms;
}

if (isMain(import.meta.url)) {
  const result = await run();
  console.log(`Start-up to the ready line (median of ${RUNS}):`);
  console.log(`  first start${result.first_start_built ? " (built the UI)" : ""}:  ${result.first_start_ms} ms`);
  console.log(
    `  worldline serve, UI built:   ${result.startup_ready_ms} ms (first page served: ${result.startup_first_page_ms} ms)`,
  );
  console.log(`  API-only bridge:             ${result.startup_api_ready_ms} ms`);
  console.log(`  bare node + tsx (baseline):  ${result.node_baseline_ms} ms (ratio ${result.startup_ratio})`);
  console.log(`  bare node, no loader:        ${result.node_plain_baseline_ms} ms`);
  printJsonLine(result);
}
