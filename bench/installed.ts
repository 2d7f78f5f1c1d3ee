/**
 * Start-up of the installed package: `worldline` from an `npm install -g` of the
 * packed tarball, run in a fresh git repository with a fresh HOME, from spawn to its ready line
 * (target: under 3 s), and on to the session's page served; beside it, a bare Node process
 * printing a line, the floor of any Node command. Run with `npx tsx bench/installed.ts`.
 *
 * The tarball is packed here (prepack rebuilds only what is stale). Installing it compiles
 * better-sqlite3 and node-pty (minutes on 2 cores), so an install left by a passing
 * `npm run test:install` of the same tarball is used when there is one (tests/install/cache.mjs),
 * and one made here is kept the same way.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { cachedPrefix, keepInstall } from "../tests/install/cache.mjs";
import { BENCH_TOKEN, firstLine, ROOT, stopChild } from "./lib/bridge-child.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { median, round } from "./lib/stats.ts";

const RUNS = 3;
const READY_TIMEOUT_MS = 60_000;
/** npm pack may build the UI (a minute or more); npm install compiles two native modules. */
const NPM_TIMEOUT_MS = 8 * 60_000;
const READY_PREFIX = "Worldline ready: ";

export interface InstalledBenchResult {
  /** Spawn of the installed `worldline` in a folder until its ready line (median of RUNS fresh starts). */
  installed_start_ms: number;
  /** …until the folder's session page has been served. */
  installed_first_page_ms: number;
  /** Bare `node -e` printing a line, the same way: the floor. */
  installed_node_baseline_ms: number;
  tarball_bytes: number;
  tarball_files: number;
  /** False when an earlier install of the same tarball was reused. */
  installed_now: boolean;
}

export async function run(): Promise<InstalledBenchResult> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-installed-"));
  try {
    const { tarball, bytes, files } = pack(work);
    let prefix = cachedPrefix(tarball);
    const installedNow = !fs.existsSync(path.join(prefix, "bin", "worldline"));
    if (installedNow) {
      const fresh = path.join(work, "prefix");
      npm(["install", "-g", "--prefix", fresh, tarball, "--no-audit", "--no-fund"], work);
      prefix = keepInstall(tarball, fresh);
    }
    const ready: number[] = [];
    const page: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const start = await startInstalled(path.join(prefix, "bin", "worldline"), work, i);
      ready.push(start.readyMs);
      page.push(start.pageMs);
    }
    const baseline: number[] = [];
    for (let i = 0; i < RUNS; i++) baseline.push(await bareNode());
    return {
      installed_start_ms: Math.round(median(ready)),
      installed_first_page_ms: Math.round(median(page)),
      installed_node_baseline_ms: round(median(baseline), 1),
      tarball_bytes: bytes,
      tarball_files: files,
      installed_now: installedNow,
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function pack(work: string): { tarball: string; bytes: number; files: number } {
  const out = npm(["pack", "--json", "--pack-destination", work], ROOT);
  const [info] = JSON.parse(out.slice(out.indexOf("["))) as { filename: string; size: number; entryCount: number }[];
  return { tarball: path.join(work, info.filename), bytes: info.size, files: info.entryCount };
}

function npm(args: string[], cwd: string): string {
  // bench/run.ts points WORLDLINE_NEXT_DIST at its own build; the package ships .next/.
  const { WORLDLINE_NEXT_DIST: _ignored, ...env } = process.env;
  const result = spawnSync("npm", args, { cwd, env, encoding: "utf8", timeout: NPM_TIMEOUT_MS, maxBuffer: 64 << 20 });
  if (result.status !== 0)
    throw new Error(`npm ${args.join(" ")} failed (${result.status}): ${result.stderr.slice(-2000)}`);
  return result.stdout;
}

/** One first start: a new person (empty HOME, so a new ~/.worldline) in a new repository. */
async function startInstalled(bin: string, work: string, n: number): Promise<{ readyMs: number; pageMs: number }> {
  const home = path.join(work, `home-${n}`);
  const repo = path.join(work, `repo-${n}`);
  fs.mkdirSync(home);
  fs.mkdirSync(repo);
  spawnSync("git", ["init", "-q"], { cwd: repo });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    PORT: "0",
    WORLDLINE_TOKEN: BENCH_TOKEN,
  };
  for (const name of ["WORLDLINE_HOME", "WORLDLINE_NEXT_DIST", "WORLDLINE_DEV", "DATABASE_URL", "REDIS_URL"])
    delete env[name];
  const start = performance.now();
  const child = spawn(bin, [], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
  let errors = "";
  child.stderr?.on("data", (data: Buffer) => (errors = (errors + data.toString()).slice(-4000)));
  try {
    const line = await firstLine(child, READY_TIMEOUT_MS, (text) => text.startsWith(READY_PREFIX));
    const readyMs = performance.now() - start;
    const url = new URL(line.slice(READY_PREFIX.length).trim());
    const response = await fetch(`${url.origin}${url.pathname}`, {
      headers: { authorization: `Bearer ${BENCH_TOKEN}` },
    });
    await response.text();
    if (response.status !== 200) throw new Error(`the session page answered ${response.status}`);
    return { readyMs, pageMs: performance.now() - start };
  } catch (error) {
    throw new Error(`${(error as Error).message}; its stderr ended with:\n${errors}`);
  } finally {
    await stopChild(child);
  }
}

async function bareNode(): Promise<number> {
  const start = performance.now();
  const child = spawn(process.execPath, ["-e", "console.log('ready')"], { stdio: ["ignore", "pipe", "ignore"] });
  await firstLine(child, READY_TIMEOUT_MS);
  const ms = performance.now() - start;
  await stopChild(child);
  return ms;
}

if (isMain(import.meta.url)) printJsonLine(await run());
