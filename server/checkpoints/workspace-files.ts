import { execFile } from "node:child_process";
import { lstat, mkdir, readFile, readlink, realpath, unlink, writeFile } from "node:fs/promises";
import path, { dirname, join, relative, sep } from "node:path";
import { promisify } from "node:util";
import { errorMessage, WorldlineError } from "../errors";
import { isNotFound, lstatOrNull, nullIfNotFound } from "../stat-or-null.ts";
import type { MaterializeResult, RevertSpec } from "./types.ts";

/**
 * What checkpoints do to a workspace's files outside git: read a file as a snapshot sees it,
 * write a Changes-view revert back, and make a fork's folder. Done where the workspace is:
 * in the bridge for this machine (ShadowRepo), in the runner for a runner's.
 */

const run = promisify(execFile);

/** A workspace-relative path from the hub: no absolute path, no `..`, no NUL. */
function inside(workspace: string, file: string): string {
  if (path.isAbsolute(file) || file.includes("\0") || file.split(/[\\/]/).includes(".."))
    throw new WorldlineError("checkpoint:bad_request", `not a path inside the workspace: ${JSON.stringify(file)}`);
  return join(workspace, file);
}

/** The file as the snapshot sees it: a symlink's target text, not the file it points to. */
export async function readNow(workspace: string, file: string): Promise<Buffer | undefined> {
  const absolute = inside(workspace, file);
  try {
    await refuseSymlinkedParents(workspace, [file]);
    const stats = await lstat(absolute);
    return stats.isSymbolicLink() ? Buffer.from(await readlink(absolute)) : await readFile(absolute);
  } catch (error) {
    // Gone since the diff, or behind a symlinked folder: shown as deleted content. Anything else (EACCES, EIO) is reported.
    if (isNotFound(error) || (error instanceof WorldlineError && error.code === "checkpoint:blocked")) return undefined;
    throw error;
  }
}

/** Writes a revert back after checking no symlink is on its way; `dryRun` checks only. */
export async function revertFile(
  workspace: string,
  spec: RevertSpec,
  options: { dryRun?: boolean } = {},
): Promise<MaterializeResult> {
  const file = inside(workspace, spec.path);
  const paths = [spec.path, spec.oldPath].filter((p): p is string => Boolean(p));
  for (const each of paths) inside(workspace, each);
  // Writing lines into a symlink would change the file it points to, not the link.
  if (spec.hunkText !== undefined && (await lstatOrNull(file))?.isSymbolicLink())
    throw new WorldlineError("review:invalid", `${spec.path} is a symlink: revert the whole file instead.`);
  await refuseSymlinkedParents(workspace, paths);
  if (options.dryRun) return { written: [], deleted: [] };
  if (spec.hunkText !== undefined) {
    await writeFile(file, spec.hunkText);
    return { written: [spec.path], deleted: [] };
  }
  const written: string[] = [];
  const deleted: string[] = [];
  const target = spec.oldPath ?? spec.path;
  const restore = spec.status !== "added" && spec.base !== undefined;
  // Unlinked first even when rewritten: writing to a symlink would follow it.
  if (spec.status !== "deleted") await unlink(file).catch(ignoreMissing);
  if (spec.status !== "deleted" && !(restore && target === spec.path)) deleted.push(spec.path);
  if (restore) {
    await mkdir(dirname(join(workspace, target)), { recursive: true });
    await writeFile(join(workspace, target), spec.base as Uint8Array);
    written.push(target);
  }
  return { written, deleted };
}

/** A fork's folder `<home>/forks/<name>` (a detached worktree with `worktree`), filled by `materialize`; its real path. */
export async function forkFolder(
  workspace: string,
  home: string,
  options: { name: string; worktree: boolean },
  materialize: (dest: string) => Promise<unknown>,
): Promise<string> {
  if (!/^[\w.-]{1,128}$/.test(options.name) || options.name.startsWith("."))
    throw new WorldlineError("checkpoint:bad_request", `not a fork folder name: ${JSON.stringify(options.name)}`);
  await mkdir(join(home, "forks"), { recursive: true });
  const dir = join(home, "forks", options.name);
  const dest = options.worktree ? await addWorktree(workspace, dir) : dir;
  await materialize(dest);
  return realpath(dest);
}

/** A detached worktree of the workspace's repository at `dir`; returns the workspace's place inside it. */
async function addWorktree(workspace: string, dir: string): Promise<string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("GIT_")),
  ) as NodeJS.ProcessEnv;
  let top: string;
  try {
    top = (await run("git", ["-C", workspace, "rev-parse", "--show-toplevel"], { env })).stdout.trim();
  } catch {
    throw new WorldlineError(
      "checkpoint:invalid",
      "The workspace is not in a git repository; fork into a folder instead (worktree: false).",
    );
  }
  try {
    await run("git", ["-C", top, "worktree", "add", "--detach", dir, "HEAD"], { env });
  } catch (error) {
    throw new WorldlineError("checkpoint:git_failed", `git worktree add failed: ${errorMessage(error)}`);
  }
  return path.join(dir, path.relative(await realpath(top), workspace));
}

/** A revert writes through no symlinked folder (it could land outside the workspace). */
async function refuseSymlinkedParents(workspace: string, paths: string[]): Promise<void> {
  for (const file of paths) {
    let parent = dirname(join(workspace, file));
    // Climb to the nearest parent that exists (a missing one is created below).
    while ((await realpath(parent).catch(nullIfNotFound)) === null && parent !== workspace) parent = dirname(parent);
    const real = await realpath(parent);
    const within = relative(workspace, real);
    if (within.startsWith("..") || within.split(sep).includes("..") || real !== parent) {
      throw new WorldlineError("checkpoint:blocked", `Cannot revert ${file}: a folder on its way is a symlink.`, {
        details: { paths: [file] },
      });
    }
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== "ENOENT") throw error;
}
