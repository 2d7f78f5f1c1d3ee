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

/**
 * Parses `git diff-tree -r -z --raw [--numstat]`: the raw records come first, then one
 * numstat record per raw record in the same order (`-\t-` for binary content).
 */
function parseDiffTree(output: Buffer): { raw: RawChange[]; counts: LineCounts[] } {
  const fields = splitNul(output);
  const raw: RawChange[] = [];
  const counts: LineCounts[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    if (field.startsWith(":")) {
      const [oldMode, newMode, oldBlob, newBlob, score] = field.slice(1).split(" ");
      const status = score[0];
      const first = fields[++i];
      if (status === "R" || status === "C")
        raw.push({ status, oldPath: first, path: fields[++i], oldMode, newMode, oldBlob, newBlob });
      else raw.push({ status, path: first, oldMode, newMode, oldBlob, newBlob });
      continue;
    }
    const [added, deleted, path] = field.split("\t");
    // A rename's numstat leaves the path empty and follows with old and new paths as separate fields.
    if (path === "") i += 2;
    const binary = added === "-";
    counts.push({ additions: binary ? 0 : Number(added), deletions: binary ? 0 : Number(deleted), binary });
  }
  return { raw, counts };
}

function statusOf(code: string): FileChangeStatus {
  if (code === "A") return "added";
  if (code === "D") return "deleted";
  if (code === "R") return "renamed";
  return "modified";
}

/** Per-file changes between two trees or commits, with renames detected. */
export async function treeChanges(target: GitTarget, from: string, to: string): Promise<FileChange[]> {
  const { stdout } = await git(target, [
    "diff-tree",
    "-r",
    "-z",
    "-M",
    "--raw",
    "--numstat",
    "--no-ext-diff",
    from,
    to,
  ]);
  const { raw, counts } = parseDiffTree(stdout);
  return raw.map((entry, index) => {
    const lines = counts[index] ?? { additions: 0, deletions: 0, binary: false };
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
  return parseDiffTree(stdout).raw;
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
