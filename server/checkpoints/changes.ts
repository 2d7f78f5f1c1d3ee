import { lineCounts } from "../diff";
import { readBlobs } from "./blobs.ts";
import { MAX_PATCH_CHARS } from "./constants.ts";
import { git, splitNul, type GitTarget } from "./git.ts";
import type { FileChange, FileChangeStatus } from "./types.ts";

/** One line of `git diff-tree --raw`: what a path was and becomes between two trees. */
export interface RawChange {
  /** A (added), D (deleted), M (modified), T (type changed, e.g. file ↔ symlink), R (renamed). */
  status: string;
  path: string;
  oldPath?: string;
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
}

interface LineCounts {
  additions: number;
  deletions: number;
  binary: boolean;
}

/** What `--raw` shows for the missing side of an added or deleted path. */
const NULL_OID = /^0+$/;
/** A submodule's entry: a commit, not content this repository holds. */
const GITLINK_MODE = "160000";

/** Parses `git diff-tree -r -z --raw`: a `:modes blobs status` field, then one path (two for a rename). */
function parseDiffTree(output: Buffer): RawChange[] {
  const fields = splitNul(output);
  const raw: RawChange[] = [];
  for (let i = 0; i < fields.length; i++) {
    const [oldMode, newMode, oldBlob, newBlob, score] = fields[i].slice(1).split(" ");
    const status = score[0];
    const first = fields[++i];
    if (status === "R" || status === "C")
      raw.push({ status, oldPath: first, path: fields[++i], oldMode, newMode, oldBlob, newBlob });
    else raw.push({ status, path: first, oldMode, newMode, oldBlob, newBlob });
  }
  return raw;
}

/** The blob of one side of a change, or none where that side is missing or a submodule. */
function sideBlob(mode: string, blob: string): string | undefined {
  return NULL_OID.test(blob) || mode === GITLINK_MODE ? undefined : blob;
}

/**
 * Lines added and deleted per change, counted by the server's one line diff (server/diff) so
 * the timeline agrees with the Changes view and approval cards. One `cat-file --batch` streams
 * every blob in order; each pair is counted as it arrives, so no more than one file's two sides
 * are held at once.
 */
async function countLines(target: GitTarget, raw: readonly RawChange[]): Promise<LineCounts[]> {
  const sides = raw.map((change) => [
    sideBlob(change.oldMode, change.oldBlob),
    sideBlob(change.newMode, change.newBlob),
  ]);
  const blobs = readBlobs(
    target,
    sides.flat().filter((blob): blob is string => blob !== undefined),
  );
  const next = async (blob: string | undefined) => (blob === undefined ? undefined : (await blobs.next()).value);
  const counts: LineCounts[] = [];
  try {
    for (const [oldBlob, newBlob] of sides) {
      const before = await next(oldBlob);
      const after = await next(newBlob);
      if (before?.includes(0) || after?.includes(0)) {
        counts.push({ additions: 0, deletions: 0, binary: true });
        continue;
      }
      counts.push({ ...lineCounts(before?.toString("utf8") ?? "", after?.toString("utf8") ?? ""), binary: false });
    }
    await blobs.next(); // lets the reader check that git delivered every blob and exited
  } finally {
    await blobs.return(undefined);
  }
  return counts;
}

function statusOf(code: string): FileChangeStatus {
  if (code === "A") return "added";
  if (code === "D") return "deleted";
  if (code === "R") return "renamed";
  return "modified";
}

/** Per-file changes between two trees or commits, with renames detected. */
export async function treeChanges(target: GitTarget, from: string, to: string): Promise<FileChange[]> {
  const { stdout } = await git(target, ["diff-tree", "-r", "-z", "-M", "--raw", from, to]);
  const raw = parseDiffTree(stdout);
  const counts = await countLines(target, raw);
  return raw.map((entry, index) => {
    const lines = counts[index];
    const change: FileChange = {
      path: entry.path,
      status: statusOf(entry.status),
      additions: lines.additions,
      deletions: lines.deletions,
    };
    if (entry.oldPath !== undefined) change.oldPath = entry.oldPath;
    if (lines.binary) change.binary = true;
    return change;
  });
}

/** Exact per-path differences (no rename pairing): what a restore has to write or delete. */
export async function rawChanges(target: GitTarget, from: string, to: string): Promise<RawChange[]> {
  const { stdout } = await git(target, ["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to]);
  return parseDiffTree(stdout);
}

/** Paths that differ between two trees or commits. */
export async function changedPaths(target: GitTarget, from: string, to: string): Promise<string[]> {
  const { stdout } = await git(target, ["diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to]);
  return splitNul(stdout);
}

export async function treePatch(
  target: GitTarget,
  from: string,
  to: string,
): Promise<{ patch: string; truncated: boolean }> {
  const { stdout } = await git(target, [
    "diff-tree",
    "-r",
    "-p",
    "-M",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    from,
    to,
  ]);
  const patch = stdout.toString("utf8");
  if (patch.length <= MAX_PATCH_CHARS) return { patch, truncated: false };
  return { patch: patch.slice(0, MAX_PATCH_CHARS), truncated: true };
}
