/**
 * Checkpoint engine benchmark: snapshot cost on a 10,000-file workspace when one
 * file changed (target < 200 ms) and when nothing changed, and rewinding 100 changed files
 * (target < 1 s). Run with `npx tsx bench/checkpoints.ts`; the last line printed is one JSON
 * object. `run()` returns the same numbers for a bench runner.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { openShadowRepo } from "../server/checkpoints/index.ts";

/** The workspace size from the performance target. */
const FILE_COUNT = 10_000;
/** Files per folder: a plausible source tree fan-out. */
const FILES_PER_DIR = 100;
/** Repetitions per measurement; the median hides one-off scheduler noise on 2 shared cores. */
const RUNS = 7;
/** Files changed between the checkpoint and the rewind, from the target. */
const REWIND_FILES = 100;

export interface CheckpointBenchResult {
  files: number;
  initial_snapshot_ms: number;
  snapshot_one_change_ms: number;
  snapshot_no_change_ms: number;
  rewind_100_files_ms: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (ms: number) => Math.round(ms * 10) / 10;

async function timed<T>(operation: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const result = await operation();
  return [performance.now() - start, result];
}

function fileBody(index: number, version: number): string {
  const lines = [`// file ${index}, version ${version}`];
  for (let line = 0; line < 40; line++) lines.push(`export const value${line} = ${index * 41 + line + version};`);
  return `${lines.join("\n")}\n`;
}

const filePath = (index: number) => `src/mod${Math.floor(index / FILES_PER_DIR)}/file${index}.ts`;

export async function run(): Promise<CheckpointBenchResult> {
  const root = mkdtempSync(join(tmpdir(), "wl-bench-checkpoints-"));
  const ws = join(root, "ws");
  try {
    for (let dir = 0; dir < FILE_COUNT / FILES_PER_DIR; dir++)
      mkdirSync(join(ws, `src/mod${dir}`), { recursive: true });
    for (let i = 0; i < FILE_COUNT; i++) writeFileSync(join(ws, filePath(i)), fileBody(i, 0));
    const repo = await openShadowRepo(ws, { home: join(root, "home") });

    const [initial] = await timed(() => repo.snapshot());

    const oneChange: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const index = (run * 997) % FILE_COUNT;
      writeFileSync(join(ws, filePath(index)), fileBody(index, run + 1));
      const [ms, result] = await timed(() => repo.snapshot());
      if (result.changed.length !== 1) throw new Error(`expected one changed file, got ${result.changed.length}`);
      oneChange.push(ms);
    }

    const noChange: number[] = [];
    for (let run = 0; run < RUNS; run++) noChange.push((await timed(() => repo.snapshot()))[0]);

    const rewind: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const checkpoint = await repo.snapshot();
      for (let k = 0; k < REWIND_FILES; k++) {
        const index = (run * 131 + k * 89) % FILE_COUNT;
        writeFileSync(join(ws, filePath(index)), fileBody(index, 1000 + run));
      }
      const baseline = await repo.snapshot();
      const [ms, result] = await timed(() => repo.restore(checkpoint.commit, { baseline: baseline.commit }));
      if (result.written.length !== REWIND_FILES)
        throw new Error(`expected ${REWIND_FILES} restored files, got ${result.written.length}`);
      rewind.push(ms);
    }

    return {
      files: FILE_COUNT,
      initial_snapshot_ms: round(initial),
      snapshot_one_change_ms: round(median(oneChange)),
      snapshot_no_change_ms: round(median(noChange)),
      rewind_100_files_ms: round(median(rewind)),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await run();
  const verdict = (ms: number, target: number) =>
    ms < target ? `ok, target < ${target} ms` : `OVER the ${target} ms target`;
  console.log(`Checkpoints on a ${result.files}-file workspace (median of ${RUNS} runs):`);
  console.log(`  first snapshot (hashes everything):  ${result.initial_snapshot_ms} ms`);
  console.log(
    `  snapshot, one file changed:          ${result.snapshot_one_change_ms} ms (${verdict(result.snapshot_one_change_ms, 200)})`,
  );
  console.log(`  snapshot, nothing changed:           ${result.snapshot_no_change_ms} ms`);
  console.log(
    `  rewind of ${REWIND_FILES} changed files:        ${result.rewind_100_files_ms} ms (${verdict(result.rewind_100_files_ms, 1000)})`,
  );
  console.log(JSON.stringify(result));
}
