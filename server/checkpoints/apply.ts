import { chmod, mkdir, readdir, rm, rmdir, symlink, unlink, writeFile } from "node:fs/promises";
import type { Stats } from "node:fs";
import { dirname, join } from "node:path";
import { WorldlineError } from "../errors.ts";
import { lstatOrNull } from "../stat-or-null.ts";
import { readBlobs } from "./blobs.ts";
import type { RawChange } from "./changes.ts";
import type { GitTarget } from "./git.ts";

/**
 * Turning a tree diff into file operations: plan (pure), check (reads only), apply (writes).
 * Everything that could make a restore stop half-way is found by `checkPlan` before the
 * first write, so a refused restore writes nothing.
 */

export interface FileWrite {
  path: string;
  mode: string;
  blob: string;
}

export interface ApplyPlan {
  writes: FileWrite[];
  deletes: string[];
  /** Paths the diff would change but that are protected (content never captured). */
  untouched: string[];
}

type FolderState = "folder" | "absent" | "blocked";

const GITLINK_MODE = "160000";
const SYMLINK_MODE = "120000";
const EXECUTABLE_MODE = "100755";

/** Protected entries are exact paths, or folders written with a trailing slash. */
function isProtected(path: string, protectedPaths: ReadonlySet<string>): boolean {
  if (protectedPaths.has(path)) return true;
  for (let slash = path.indexOf("/"); slash >= 0; slash = path.indexOf("/", slash + 1)) {
    if (protectedPaths.has(path.slice(0, slash + 1))) return true;
  }
  return false;
}

function touchesGitDir(path: string): boolean {
  return path.split("/").some((part) => part.toLowerCase() === ".git");
}

/** What it takes to turn the `from` side of `changes` into the `to` side. */
export function planApply(changes: readonly RawChange[], protectedPaths: ReadonlySet<string>): ApplyPlan {
  const plan: ApplyPlan = { writes: [], deletes: [], untouched: [] };
  for (const change of changes) {
    // git itself never stores these; refusing them keeps a damaged shadow repo away from the user's .git.
    if (touchesGitDir(change.path))
      throw new WorldlineError("checkpoint:corrupt", `snapshot contains a .git path: ${change.path}`);
    if (isProtected(change.path, protectedPaths)) plan.untouched.push(change.path);
    else if (change.status === "D") plan.deletes.push(change.path);
    else if (change.newMode !== GITLINK_MODE)
      plan.writes.push({ path: change.path, mode: change.newMode, blob: change.newBlob });
  }
  plan.writes.sort((a, b) => (a.path < b.path ? -1 : 1));
  plan.deletes.sort();
  plan.untouched.sort();
  return plan;
}

/** All files (not folders) under `dir`, relative to the work tree. */
async function filesUnder(root: string, dir: string): Promise<string[]> {
  const entries = await readdir(join(root, dir), { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory() ? filesUnder(root, `${dir}/${entry.name}`) : Promise.resolve([`${dir}/${entry.name}`]),
    ),
  );
  return nested.flat();
}

/**
 * Finds what would block the plan: a symlink or file where a written path needs a folder
 * (writing through a symlink could land outside the workspace), or a folder holding
 * files we may not delete where a file must go.
 */
export async function checkPlan(workTree: string, plan: ApplyPlan): Promise<void> {
  const deleting = new Set(plan.deletes);
  const blocked = new Set<string>();
  const folders = new Map<string, Promise<FolderState>>();

  // Top-down: lstat of `a/b` follows a symlinked `a`, so `a` must be judged first.
  const folderState = (dir: string): Promise<FolderState> => {
    if (dir === ".") return Promise.resolve("folder");
    let state = folders.get(dir);
    if (!state) {
      state = (async (): Promise<FolderState> => {
        const above = await folderState(dirname(dir));
        if (above !== "folder") return above;
        if (deleting.has(dir)) return "absent"; // a tracked file or symlink the restore removes first
        const stats = await lstatOrNull(join(workTree, dir));
        if (!stats) return "absent";
        if (stats.isDirectory()) return "folder";
        blocked.add(dir);
        return "blocked";
      })();
      folders.set(dir, state);
    }
    return state;
  };

  await Promise.all(
    plan.writes.map(async ({ path }) => {
      if ((await folderState(dirname(path))) !== "folder") return;
      const stats = await lstatOrNull(join(workTree, path));
      if (!stats?.isDirectory()) return;
      const inside = await filesUnder(workTree, path);
      if (inside.some((file) => !deleting.has(file))) blocked.add(path);
    }),
  );
  if (blocked.size > 0) {
    const paths = [...blocked].sort();
    throw new WorldlineError(
      "checkpoint:blocked",
      `cannot restore: ${paths.join(", ")} ${paths.length === 1 ? "is" : "are"} in the way (a symlink, file or non-empty folder where the snapshot needs something else)`,
      { details: { paths } },
    );
  }
}

/** Permission bits for a regular file: keep what the user had, flip only the executable bits as git records them. */
function fileMode(previous: Stats | null, gitMode: string): number {
  const base = previous?.isFile() ? previous.mode & 0o777 : 0o666 & ~process.umask();
  return gitMode === EXECUTABLE_MODE ? base | ((base & 0o444) >> 2) : base & ~0o111;
}

async function deletePaths(workTree: string, paths: readonly string[]): Promise<string[]> {
  const deleted: string[] = [];
  const parents = new Set<string>();
  for (const path of paths) {
    const stats = await lstatOrNull(join(workTree, path));
    if (!stats || stats.isDirectory()) continue; // already gone, or replaced by a folder we must not empty
    await unlink(join(workTree, path));
    deleted.push(path);
    for (let parent = dirname(path); parent !== "."; parent = dirname(parent)) parents.add(parent);
  }
  // Like git: folders emptied by the restore go too. A folder still holding ignored files stays.
  for (const parent of [...parents].sort((a, b) => b.length - a.length)) {
    await rmdir(join(workTree, parent)).catch(() => undefined); // not empty (the user's files) or gone: either way it stays as it is
  }
  return deleted;
}

async function writeOne(workTree: string, write: FileWrite, content: Buffer): Promise<void> {
  const absolute = join(workTree, write.path);
  await mkdir(dirname(absolute), { recursive: true });
  const previous = await lstatOrNull(absolute);
  // checkPlan proved a folder here only holds deleted files, i.e. empty folders by now.
  if (previous?.isDirectory()) await rm(absolute, { recursive: true });
  // Replace rather than write in place: writing to an existing symlink would follow it.
  else if (previous) await unlink(absolute);
  if (write.mode === SYMLINK_MODE) return symlink(content.toString("utf8"), absolute);
  const mode = fileMode(previous, write.mode);
  await writeFile(absolute, content, { flag: "wx", mode });
  await chmod(absolute, mode);
}

export async function applyPlan(target: GitTarget, plan: ApplyPlan): Promise<{ written: string[]; deleted: string[] }> {
  const deleted = await deletePaths(target.workTree, plan.deletes);
  const written: string[] = [];
  let index = 0;
  for await (const content of readBlobs(
    target,
    plan.writes.map((write) => write.blob),
  )) {
    const write = plan.writes[index++];
    await writeOne(target.workTree, write, content);
    written.push(write.path);
  }
  return { written, deleted };
}
