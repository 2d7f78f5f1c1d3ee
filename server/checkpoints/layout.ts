import { createHash } from "node:crypto";
import { mkdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, relative, sep } from "node:path";
import { WorldlineError } from "../errors.ts";
import { SKIP_PATTERNS } from "../ignore/index.ts";
import { RAW_ATTRIBUTES, STALE_LOCK_MS } from "./constants.ts";
import { git, gitText, type GitTarget } from "./git.ts";
import { statOrNull } from "../stat-or-null.ts";

/** Where shadow repositories live and how one is created. */

/** Hex digits of the workspace hash in the folder name: enough to never collide in one home. */
const WORKSPACE_HASH_LENGTH = 24;

export function defaultHome(): string {
  return process.env.WORLDLINE_HOME || join(homedir(), ".worldline");
}

/** `<home>/snapshots/<sha256 of the workspace realpath>` — the shadow git dir itself. */
export function shadowGitDir(home: string, workspaceRealpath: string): string {
  const hash = createHash("sha256").update(workspaceRealpath).digest("hex").slice(0, WORKSPACE_HASH_LENGTH);
  return join(home, "snapshots", hash);
}

export async function resolveWorkspace(workspace: string): Promise<string> {
  const resolved = await realpath(workspace).catch((error: unknown) => {
    throw new WorldlineError("checkpoint:workspace_missing", `workspace ${workspace} does not exist`, { cause: error });
  });
  if (!(await stat(resolved)).isDirectory()) {
    throw new WorldlineError("checkpoint:workspace_missing", `workspace ${workspace} is not a folder`);
  }
  return resolved;
}

/** The exclude file: the workspace skip list (as the file tree and glob/grep apply it), extra patterns, our data dir inside the workspace. */
export function excludeFileText(workspace: string, home: string, extra: readonly string[]): string {
  const lines = ["# Written by Worldline; regenerated on every open.", ...SKIP_PATTERNS, ...extra];
  const homeInside = relative(workspace, home);
  if (homeInside && !homeInside.startsWith("..") && !isAbsolute(homeInside)) {
    lines.push(`/${homeInside.split(sep).join("/")}/`);
  }
  return `${lines.join("\n")}\n`;
}

async function writeIfChanged(path: string, text: string): Promise<boolean> {
  const current = await readFile(path, "utf8").catch(() => undefined); // missing or unreadable: written anew below
  if (current === text) return false;
  await writeFile(path, text);
  return true;
}

/** Removes lock files a crashed process left behind; a live one is younger than STALE_LOCK_MS. */
async function clearStaleLocks(gitDir: string): Promise<void> {
  for (const lock of ["index.lock", "refs/heads/snapshots.lock", "HEAD.lock", "config.lock"]) {
    const path = join(gitDir, lock);
    const info = await statOrNull(path);
    if (info && Date.now() - info.mtimeMs > STALE_LOCK_MS) await rm(path, { force: true });
  }
}

/**
 * Creates the shadow repository if needed and (re)writes its exclude and attributes files.
 * Returns whether the exclude rules changed, in which case tracked paths they now exclude
 * must be dropped at the next snapshot, and whether the repository was just created.
 */
export async function prepareShadowRepo(
  target: GitTarget,
  excludeText: string,
): Promise<{ excludeChanged: boolean; fresh: boolean }> {
  await mkdir(target.emptyDir, { recursive: true });
  const fresh = !(await statOrNull(join(target.gitDir, "HEAD")));
  if (fresh) {
    await git(target, ["init", "--quiet", "--template="]);
    // init records the work tree it saw; we always pass it explicitly (materialize uses another one).
    await git(target, ["config", "--unset", "core.worktree"], { okCodes: [5] });
    await git(target, ["config", "core.logAllRefUpdates", "false"]);
    await writeFile(join(target.gitDir, "worldline-workspace"), `${target.workTree}\n`);
  }
  await clearStaleLocks(target.gitDir);
  await mkdir(join(target.gitDir, "info"), { recursive: true });
  await writeIfChanged(join(target.gitDir, "info", "attributes"), RAW_ATTRIBUTES);
  const excludeChanged = await writeIfChanged(join(target.gitDir, "info", "exclude"), excludeText);
  return { excludeChanged: excludeChanged && !fresh, fresh };
}

/** Writes the empty blob, which nested-repository placeholders point at. */
export async function ensureEmptyBlob(target: GitTarget): Promise<string> {
  return gitText(target, ["hash-object", "-w", "--stdin"], { input: "" });
}
