import { constants as fsConstants, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { WorldlineError } from "../errors";
import { lstatOrNull } from "../stat-or-null";

/** Symlink hops followed before giving up, like the kernel's ELOOP limit. */
const MAX_SYMLINK_HOPS = 40;

export interface ResolvedPath {
  /** What the model asked for. */
  input: string;
  /** The real location after following every symlink; tools operate on this. */
  real: string;
  /** Relative to the workspace when inside, otherwise the real absolute path. */
  display: string;
  inside: boolean;
  /** Why the path is sensitive (`.env file`, `private key`, …), if it is. */
  sensitive?: string;
  /**
   * Names of an existing regular file when more than one (st_nlink > 1): another name
   * may be outside the workspace, and realpath cannot tell where, so writes always ask.
   */
  hardLinks?: number;
}

/**
 * Resolves a path the model gave against the workspace. `~` means the home
 * folder; relative paths are relative to the workspace; symlinks are followed
 * (also dangling ones and symlinked parents of paths that do not exist yet) so
 * that `inside` describes where a read or write would really land.
 */
export async function resolveInWorkspace(workspace: string, input: string): Promise<ResolvedPath> {
  if (input.includes("\0")) throw new WorldlineError("fs:invalid_path", "The path contains a NUL byte.");
  if (input.trim() === "") throw new WorldlineError("fs:invalid_path", "The path is empty.");
  const root = await realpathLoose(path.resolve(workspace));
  const expanded = expandHome(input);
  const lexical = path.resolve(root, expanded);
  const real = await realpathLoose(lexical);
  const inside = isWithin(root, real);
  const display = inside ? path.relative(root, real) || "." : real;
  const sensitive = sensitiveReason(real, root) ?? sensitiveReason(lexical, root);
  const stat = await lstatOrNull(real);
  const hardLinks = stat?.isFile() && stat.nlink > 1 ? stat.nlink : undefined;
  return { input, real, display, inside, sensitive, ...(hardLinks ? { hardLinks } : {}) };
}

/**
 * Writes a resolved file without following a symlink planted since it was resolved:
 * the parent folder is resolved again right before the open, the last component is
 * opened with O_NOFOLLOW, and a hard link that appeared since the check is refused.
 * Not covered: a parent swapped in the microseconds between that re-check and the
 * open (Node has no openat2/RESOLVE_BENEATH); see SECURITY.md.
 */
export async function writeResolvedFile(resolved: ResolvedPath, content: string): Promise<void> {
  const dir = path.dirname(resolved.real);
  await assertSameRealDir(dir, resolved);
  await fs.mkdir(dir, { recursive: true });
  await assertSameRealDir(dir, resolved);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(resolved.real, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW, 0o666);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw changedError(resolved, "it became a symbolic link");
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (stat.nlink > 1 && !resolved.hardLinks) throw changedError(resolved, "it became a hard link");
    await handle.truncate(0);
    await handle.writeFile(content, "utf8");
  } finally {
    await handle.close();
  }
}

async function assertSameRealDir(dir: string, resolved: ResolvedPath): Promise<void> {
  const real = await fs.realpath(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return dir;
    throw error;
  });
  if (real !== dir) throw changedError(resolved, `a folder on the way now leads to ${real}`);
}

function changedError(resolved: ResolvedPath, why: string): WorldlineError {
  return new WorldlineError(
    "fs:path_changed",
    `${resolved.display} changed since it was checked (${why}); nothing was written. Check the path and try again.`,
  );
}

/** True when `target` is `root` or below it (`/ws-evil` is not below `/ws`). */
export function isWithin(root: string, target: string): boolean {
  if (target === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return target.startsWith(prefix);
}

/**
 * Why a path holds secrets or repository internals, or undefined. Checked on
 * both the path as written and its real target.
 */
export function sensitiveReason(absolute: string, workspace?: string): string | undefined {
  const home = os.homedir();
  if (isWithin(path.join(home, ".ssh"), absolute)) return "SSH folder";
  if (isWithin(path.join(home, ".gnupg"), absolute)) return "GnuPG folder";
  if (isWithin(path.join(home, ".aws"), absolute)) return "AWS credentials folder";
  const relevant = workspace && isWithin(workspace, absolute) ? path.relative(workspace, absolute) : absolute;
  const parts = relevant.split(path.sep).filter(Boolean);
  if (parts.includes(".git")) return "git internals";
  if (parts.includes(".ssh")) return "SSH folder";
  const base = parts[parts.length - 1] ?? "";
  if (/^\.env/i.test(base) || /\.env$/i.test(base)) return ".env file";
  if (/^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/i.test(base)) return "private key";
  if (/\.(pem|key|p12|pfx|jks|keystore)$/i.test(base)) return "private key or certificate store";
  if (
    /^(\.netrc|\.npmrc|\.pypirc|\.pgpass|\.git-credentials|credentials\.json|secrets?\.(json|ya?ml|toml))$/i.test(base)
  )
    return "credentials file";
  return undefined;
}

function expandHome(input: string): string {
  if (input === "~") return os.homedir();
  if (input.startsWith("~/")) return path.join(os.homedir(), input.slice(2));
  return input;
}

/**
 * realpath that also works for paths that do not exist yet: follows dangling
 * symlinks to their target and resolves the nearest existing parent, so
 * `ws/link-to-outside/new.txt` resolves outside.
 */
export async function realpathLoose(target: string, hops = 0): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS)
    throw new WorldlineError("fs:symlink_loop", `Too many levels of symbolic links: ${target}`);
  try {
    return await fs.realpath(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new WorldlineError("fs:symlink_loop", `Too many levels of symbolic links: ${target}`);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
  }
  const stat = await lstatOrNull(target);
  if (stat?.isSymbolicLink()) {
    const link = await fs.readlink(target);
    return realpathLoose(path.resolve(path.dirname(target), link), hops + 1);
  }
  const parent = path.dirname(target);
  if (parent === target) return target;
  return path.join(await realpathLoose(parent, hops), path.basename(target));
}
