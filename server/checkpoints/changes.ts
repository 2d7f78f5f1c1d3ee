import { lineCounts } from "../diff";
import { WorldlineError } from "../errors.ts";
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
 * Blob bytes one `cat-file --batch` call reads when counting lines: bounds what a large first
 * snapshot (every file added) holds in memory at once.
 */
const COUNT_BATCH_BYTES = 32 * 1024 * 1024;

/**
 * Lines added and deleted per change, counted by the server's one line diff (server/diff) so
 * the timeline agrees with the Changes view and approval cards. Blobs are read through `git()`
 * (the long-lived helper: a spawn from the bridge costs ~18 ms, see git-helper.ts), sizes first,
 * then the contents in batches of at most COUNT_BATCH_BYTES.
 */
async function countLines(target: GitTarget, raw: readonly RawChange[]): Promise<LineCounts[]> {
  const sides = raw.map((change) => [
    sideBlob(change.oldMode, change.oldBlob),
    sideBlob(change.newMode, change.newBlob),
  ]);
  const sizes = await blobSizes(
    target,
    [...new Set(sides.flat())].filter((blob) => blob !== undefined),
  );
  const counts: LineCounts[] = [];
  let batch: number[] = [];
  let bytes = 0;
  const countBatch = async () => {
    const wanted = [...new Set(batch.flatMap((index) => sides[index]))].filter((blob) => blob !== undefined);
    const contents =
      wanted.length > 0
        ? parseBatch(await git(target, ["cat-file", "--batch"], { input: oidLines(wanted) }))
        : new Map();
    for (const index of batch) {
      const [before, after] = sides[index].map((blob) => (blob === undefined ? undefined : contents.get(blob)));
      counts[index] =
        before?.includes(0) || after?.includes(0)
          ? { additions: 0, deletions: 0, binary: true }
          : { ...lineCounts(before?.toString("utf8") ?? "", after?.toString("utf8") ?? ""), binary: false };
    }
    batch = [];
    bytes = 0;
  };
  for (let index = 0; index < sides.length; index++) {
    const size = sides[index].reduce((sum, blob) => sum + (blob === undefined ? 0 : (sizes.get(blob) ?? 0)), 0);
    if (batch.length > 0 && bytes + size > COUNT_BATCH_BYTES) await countBatch();
    batch.push(index);
    bytes += size;
  }
  if (batch.length > 0) await countBatch();
  return counts;
}

const oidLines = (blobs: readonly string[]) => `${blobs.join("\n")}\n`;

async function blobSizes(target: GitTarget, blobs: readonly string[]): Promise<Map<string, number>> {
  if (blobs.length === 0) return new Map();
  const { stdout } = await git(target, ["cat-file", "--batch-check"], { input: oidLines(blobs) });
  const sizes = new Map<string, number>();
  for (const line of stdout.toString("utf8").split("\n")) {
    const [name, , size] = line.split(" ");
    if (name && size) sizes.set(name, Number(size));
  }
  return sizes;
}

/** `cat-file --batch` output: per blob a `<oid> blob <size>` line, the content, a newline. */
function parseBatch({ stdout }: { stdout: Buffer }): Map<string, Buffer> {
  const contents = new Map<string, Buffer>();
  let at = 0;
  while (at < stdout.length) {
    const newline = stdout.indexOf(0x0a, at);
    const [name, type, size] = stdout.toString("utf8", at, newline).split(" ");
    if (type !== "blob") {
      throw new WorldlineError(
        "checkpoint:corrupt",
        `snapshot object ${name} is ${type ?? "unreadable"}, expected a blob`,
      );
    }
    contents.set(name, stdout.subarray(newline + 1, newline + 1 + Number(size)));
    at = newline + 1 + Number(size) + 1;
  }
  return contents;
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
