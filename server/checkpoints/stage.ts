import { constants as fsConstants } from "node:fs";
import { access, open } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { lstatOrNull } from "../stat-or-null.ts";
import { MAX_NESTED_REPO_DEPTH, NESTED_REPO_PLACEHOLDER } from "./constants.ts";
import { git, gitText, joinNul, splitNul, type GitTarget } from "./git.ts";
import type { SkippedPath } from "./types.ts";

/**
 * Staging: bring the shadow index in line with a work tree, rehashing only what changed.
 *
 * `git status` (stat-based, with the untracked cache) names the candidates: tracked paths
 * whose work-tree copy changed and untracked, not-ignored files. We check each against the
 * limits and feed the survivors to `update-index`, which hashes only those. Doing this by
 * hand instead of `git add -A` is what lets us enforce size limits and report what was left
 * out. A skipped path keeps whatever content the previous snapshot had for it; the snapshot
 * records it as skipped and restore leaves it alone.
 *
 * Nested repositories: git shows a folder holding its own `.git` as one opaque untracked
 * entry (`sub/`) and `git add` would record it as a gitlink — its files would not be in the
 * snapshot and a restore could not bring them back. We snapshot such folders as plain files:
 * a placeholder entry under the folder makes git treat it as an ordinary tracked directory
 * and walk into it (the `.git` inside is never walked, at any depth). The placeholder does
 * not exist on disk, so the same update removes it again.
 */

export interface StageLimits {
  maxFileBytes: number;
  maxSnapshotBytes: number;
}

export interface StageOptions extends StageLimits {
  /** Drop tracked paths that ignore rules now exclude (after the exclude list changed). */
  rescanIgnored: boolean;
  /** The tree last written from this index, by the index's checksum (see writeTree). */
  treeCache?: TreeCache;
  /** Also list what the ignore rules exclude (fingerprint.ts); git skips its untracked cache then. */
  listIgnored?: boolean;
}

export interface TreeCache {
  checksum?: string;
  tree?: string;
}

export interface StageResult {
  tree: string;
  skipped: SkippedPath[];
  /** With `listIgnored`: ignored paths, folders as `dir/` (their contents not listed). */
  ignored?: string[];
}

interface StatusScan {
  /** Tracked paths whose work-tree state differs from the index. */
  changed: string[];
  untracked: string[];
  ignored: string[];
}

const MIB = 1024 * 1024;
const formatMiB = (bytes: number) => `${(bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)} MiB`;

/** Fields before the path in porcelain v2 records: `1 XY sub mH mI mW hH hI path`, `2 … X score path`, `u …`. */
const FIELDS_BEFORE_PATH: Record<string, number> = { "1": 8, "2": 9, u: 10 };

function pathAfterFields(record: string, fields: number): string {
  let index = 0;
  for (let i = 0; i < fields; i++) index = record.indexOf(" ", index) + 1;
  return record.slice(index);
}

/** git status only warns about folders it cannot read; we report them as skipped instead of losing them silently. */
const UNREADABLE_DIR = /^warning: could not open directory '(.+)': (.+)$/gm;

async function scanStatus(target: GitTarget, skipped: SkippedPath[], listIgnored: boolean): Promise<StatusScan> {
  const { stdout, stderr } = await git(target, [
    "status",
    "--porcelain=v2",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    "--ignore-submodules=all",
    ...(listIgnored ? ["--ignored=matching"] : []),
  ]);
  for (const [, dir, reason] of stderr.matchAll(UNREADABLE_DIR)) {
    const path = dir.endsWith("/") ? dir : `${dir}/`; // a trailing slash marks a folder for restore's protection
    if (!skipped.some((entry) => entry.path === path))
      skipped.push({ path, reason: `folder not readable (${reason})` });
  }
  const records = splitNul(stdout);
  const scan: StatusScan = { changed: [], untracked: [], ignored: [] };
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    const kind = record[0];
    if (kind === "?") scan.untracked.push(record.slice(2));
    if (kind === "!") scan.ignored.push(record.slice(2));
    const fields = FIELDS_BEFORE_PATH[kind];
    if (fields === undefined) continue;
    // Y, the second status letter, compares the index with the work tree; X (index vs last commit) is not our concern.
    if (record[3] !== ".") scan.changed.push(pathAfterFields(record, fields));
    if (kind === "2") i++; // a rename record carries its original path in the next field
  }
  return scan;
}

/** Runs status, walking into nested repositories until none is left opaque. */
async function scanWithNestedRepos(
  target: GitTarget,
  emptyBlob: string,
  skipped: SkippedPath[],
  listIgnored: boolean,
): Promise<StatusScan> {
  for (let depth = 0; ; depth++) {
    const scan = await scanStatus(target, skipped, listIgnored);
    const nested = scan.untracked.filter((path) => path.endsWith("/"));
    if (nested.length === 0) return scan;
    if (depth === MAX_NESTED_REPO_DEPTH) {
      for (const path of nested)
        skipped.push({ path, reason: `nested git repository more than ${MAX_NESTED_REPO_DEPTH} levels deep` });
      return { ...scan, untracked: scan.untracked.filter((path) => !path.endsWith("/")) };
    }
    const entries = nested.map((dir) => `100644 ${emptyBlob}\t${dir}${NESTED_REPO_PLACEHOLDER}\0`).join("");
    await git(target, ["update-index", "-z", "--index-info"], { input: entries });
  }
}

/**
 * True when every parent folder of `path` is a real directory. git refuses paths "beyond a
 * symbolic link", and a tracked `dir/x` whose `dir` became a symlink is, for us, deleted.
 */
async function parentsAreDirectories(
  workTree: string,
  path: string,
  cache: Map<string, Promise<boolean>>,
): Promise<boolean> {
  const parent = dirname(path);
  if (parent === "." || parent === "") return true;
  let result = cache.get(parent);
  if (!result) {
    result = (async () => {
      const stats = await lstatOrNull(join(workTree, parent));
      if (!stats?.isDirectory()) return false;
      return parentsAreDirectories(workTree, parent, cache);
    })();
    cache.set(parent, result);
  }
  return result;
}

interface Candidate {
  path: string;
  size: number;
}

export async function stageWorkTree(target: GitTarget, emptyBlob: string, options: StageOptions): Promise<StageResult> {
  const skipped: SkippedPath[] = [];
  const scan = await scanWithNestedRepos(target, emptyBlob, skipped, options.listIgnored ?? false);
  const paths = [...new Set([...scan.changed, ...scan.untracked])];
  const parentCache = new Map<string, Promise<boolean>>();

  const removals: string[] = [];
  const additions: Candidate[] = [];
  await Promise.all(
    paths.map(async (path) => {
      const absolute = join(target.workTree, path);
      const stats = (await parentsAreDirectories(target.workTree, path, parentCache))
        ? await lstatOrNull(absolute)
        : undefined;
      if (!stats) return void removals.push(path);
      // A tracked file that became a directory: drop the entry; the files inside arrive as untracked paths.
      if (stats.isDirectory()) return void removals.push(path);
      if (stats.isSymbolicLink()) return void additions.push({ path, size: stats.size });
      if (!stats.isFile()) return void skipped.push({ path, reason: "not a regular file or symlink" });
      if (stats.size > options.maxFileBytes) {
        return void skipped.push({
          path,
          reason: `${formatMiB(stats.size)} is over the per-file limit of ${formatMiB(options.maxFileBytes)}`,
        });
      }
      try {
        await access(absolute, fsConstants.R_OK);
      } catch {
        // reported with the snapshot as skipped
        return void skipped.push({ path, reason: "not readable" });
      }
      additions.push({ path, size: stats.size });
    }),
  );

  // Smallest first: when the budget runs out, the many small source files get in and the few big ones wait.
  additions.sort((a, b) => a.size - b.size || (a.path < b.path ? -1 : 1));
  const accepted: string[] = [];
  let budget = options.maxSnapshotBytes;
  for (const candidate of additions) {
    if (candidate.size > budget) {
      skipped.push({
        path: candidate.path,
        reason: `snapshot size limit of ${formatMiB(options.maxSnapshotBytes)} reached`,
      });
      continue;
    }
    budget -= candidate.size;
    accepted.push(candidate.path);
  }

  if (removals.length > 0)
    await git(target, ["update-index", "--force-remove", "-z", "--stdin"], { input: joinNul(removals) });
  if (accepted.length > 0) {
    await git(target, ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"], {
      input: joinNul(accepted),
    });
  }
  if (options.rescanIgnored || paths.some((path) => basename(path) === ".gitignore")) await dropIgnored(target);

  const tree = await writeTree(target, options.treeCache);
  skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { tree, skipped, ...(options.listIgnored ? { ignored: scan.ignored } : {}) };
}

/** git's index ends with a SHA-1 of everything before it: equal checksums, equal index. */
const INDEX_CHECKSUM_BYTES = 20;

async function indexChecksum(indexFile: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(indexFile, "r");
    const { size } = await handle.stat();
    if (size < INDEX_CHECKSUM_BYTES) return undefined;
    const bytes = Buffer.alloc(INDEX_CHECKSUM_BYTES);
    await handle.read(bytes, 0, INDEX_CHECKSUM_BYTES, size - INDEX_CHECKSUM_BYTES);
    const checksum = bytes.toString("hex");
    return /^0+$/.test(checksum) ? undefined : checksum; // index.skipHash writes zeros: no identity to go by
  } catch {
    // unreadable index: no identity to go by, git reads it afresh
    return undefined;
  } finally {
    await handle?.close();
  }
}

/**
 * `write-tree`, skipped when the index is byte for byte the one the cached tree was written
 * from: at a step where nothing changed, status leaves the index alone and this saves a git
 * call. The tree is cached only when the index did not change while write-tree ran (another
 * process could have updated it in between), so a cached tree always matches its index.
 */
async function writeTree(target: GitTarget, cache: TreeCache | undefined): Promise<string> {
  const before = cache && (await indexChecksum(target.indexFile));
  if (cache?.tree && before && cache.checksum === before) return cache.tree;
  const tree = await gitText(target, ["write-tree"]);
  if (cache) {
    const after = await indexChecksum(target.indexFile);
    const stable = before !== undefined && after === before;
    cache.checksum = stable ? after : undefined;
    cache.tree = stable ? tree : undefined;
  }
  return tree;
}

/** Removes tracked paths that the ignore rules now exclude, so a new .gitignore entry takes effect. */
async function dropIgnored(target: GitTarget): Promise<void> {
  const { stdout } = await git(target, ["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"]);
  if (stdout.length === 0) return;
  await git(target, ["update-index", "--force-remove", "-z", "--stdin"], { input: stdout });
}
