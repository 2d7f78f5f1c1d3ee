/**
 * Worktree sessions: `worktree_session_create_ms` is a new worktree session on a
 * 10,000-file repository, from `POST /api/v1/sessions {isolation: "worktree"}` until the answer
 * (the session is then ready for a prompt), against a bare `git worktree add` of the same
 * repository in the same run; `worktree_session_create_ratio` is the one over the other (target
 * ≤ 1.5). The two alternate, so the machine's load weighs on both alike. Run alone with
 * `npx tsx bench/worktrees.ts`; the last line printed is one JSON object.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { startBridgeProcess } from "./lib/bridge-child.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { median, round } from "./lib/stats.ts";

const exec = promisify(execFile);

/** The repository size from the target. */
const FILE_COUNT = 10_000;
const FILES_PER_DIR = 100;
/** Pairs measured (bare add, then a session); the median of each. `WL_BENCH_WORKTREE_RUNS` changes it. */
const RUNS = Number(process.env.WL_BENCH_WORKTREE_RUNS ?? 5);

export interface WorktreeBenchResult {
  files: number;
  git_worktree_add_ms: number;
  worktree_session_create_ms: number;
  worktree_session_create_ratio: number;
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  await exec("git", args, { cwd, maxBuffer: 64 * 1024 * 1024 });
}

async function makeRepo(root: string): Promise<string> {
  const repo = join(root, "repo");
  for (let dir = 0; dir < FILE_COUNT / FILES_PER_DIR; dir++)
    mkdirSync(join(repo, `src/mod${dir}`), { recursive: true });
  for (let i = 0; i < FILE_COUNT; i++) {
    const lines = Array.from({ length: 30 }, (_, line) => `export const value${line} = ${i * 31 + line};`);
    writeFileSync(join(repo, `src/mod${Math.floor(i / FILES_PER_DIR)}/file${i}.ts`), `${lines.join("\n")}\n`);
  }
  await git(repo, "init", "-q", "-b", "main");
  await git(repo, "config", "user.name", "Bench");
  await git(repo, "config", "user.email", "bench@example.test");
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", "10,000 files");
  return repo;
}

export async function run(): Promise<WorktreeBenchResult> {
  const root = mkdtempSync(join(tmpdir(), "wl-bench-worktrees-"));
  const bridge = await startBridgeProcess();
  try {
    const repo = await makeRepo(root);
    process.stderr.write(`worktrees: ${FILE_COUNT}-file repository committed\n`);
    const bare: number[] = [];
    const sessions: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let start = performance.now();
      await git(repo, "worktree", "add", "--quiet", "-b", `bench/bare-${i}`, join(root, `bare-${i}`), "main");
      bare.push(performance.now() - start);

      start = performance.now();
      const response = await fetch(`${bridge.url}/api/v1/sessions`, {
        method: "POST",
        headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
        body: JSON.stringify({ workspace: repo, isolation: "worktree", title: `bench ${i}` }),
      });
      if (response.status !== 201)
        throw new Error(`creating a worktree session: ${response.status} ${await response.text()}`);
      sessions.push(performance.now() - start);
      process.stderr.write(
        `worktrees: run ${i + 1}: add ${Math.round(bare[i])} ms, session ${Math.round(sessions[i])} ms\n`,
      );
    }
    const addMs = median(bare);
    const createMs = median(sessions);
    return {
      files: FILE_COUNT,
      git_worktree_add_ms: round(addMs, 1),
      worktree_session_create_ms: round(createMs, 1),
      worktree_session_create_ratio: round(createMs / addMs),
    };
  } finally {
    await bridge.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const result = await run();
  console.log(`A worktree session on a ${result.files}-file repository (median of ${RUNS}):`);
  console.log(`  bare git worktree add:       ${result.git_worktree_add_ms} ms`);
  console.log(
    `  POST /sessions (worktree):   ${result.worktree_session_create_ms} ms, ${result.worktree_session_create_ratio}× (target ≤ 1.5)`,
  );
  printJsonLine(result);
}
