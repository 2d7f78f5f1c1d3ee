import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  lstatSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A fresh temp folder holding `ws/` (the workspace) and `home/` (WORLDLINE_HOME). */
export function makeSandbox(): { root: string; ws: string; home: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), "wl-checkpoints-"));
  const ws = join(root, "ws");
  const home = join(root, "home");
  mkdirSync(ws);
  return { root, ws, home, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function write(root: string, path: string, content: string | Buffer, mode?: number): void {
  const absolute = join(root, path);
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileSync(absolute, content, mode === undefined ? undefined : { mode });
}

export const read = (root: string, path: string) => readFileSync(join(root, path), "utf8");

export const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

/**
 * Every entry under `root` as `path → description`: sha256 and executable bit for files,
 * the target for symlinks. Folders named in `skip` (and every `.git`) are left out.
 */
export function fingerprint(root: string, skip: readonly string[] = []): Map<string, string> {
  const result = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.name === ".git" || skip.includes(path)) continue;
      const absolute = join(root, path);
      const stats = lstatSync(absolute);
      if (stats.isSymbolicLink()) result.set(path, `link:${readlinkSync(absolute)}`);
      else if (stats.isDirectory()) walk(path);
      else result.set(path, `file:${sha256(readFileSync(absolute))}:${stats.mode & 0o111 ? "x" : "-"}`);
    }
  };
  walk("");
  return new Map([...result].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Runs git as a user would, in `cwd`, with a throwaway identity. */
export function userGit(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=User", "-c", "user.email=user@example.com", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" },
  });
}

/** Paths (and modes) stored in a snapshot commit, read straight from the shadow repository. */
export function snapshotEntries(gitDir: string, commit: string): Map<string, string> {
  const out = execFileSync("git", [`--git-dir=${gitDir}`, "ls-tree", "-r", "-z", commit], { encoding: "utf8" });
  const entries = new Map<string, string>();
  for (const record of out.split("\0").filter(Boolean)) {
    const [meta, path] = record.split("\t");
    entries.set(path, meta.split(" ")[0]);
  }
  return entries;
}
