import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { WorldlineError } from "../errors.ts";
import { SNAPSHOT_AUTHOR } from "./constants.ts";
import { runThroughHelper } from "./git-helper.ts";

/**
 * Runs git against a shadow repository with an environment that nothing of the user's can
 * reach into: no system or global config, no hooks, no inherited GIT_* variables (a bridge
 * started from a git hook would otherwise inherit GIT_DIR/GIT_INDEX_FILE), our own index.
 */
export interface GitTarget {
  gitDir: string;
  workTree: string;
  indexFile: string;
  /** An empty directory: HOME, XDG_CONFIG_HOME and core.hooksPath point here. */
  emptyDir: string;
}

export interface GitRunOptions {
  input?: string | Buffer;
  /** Exit codes that are not failures (e.g. `1` for `diff --exit-code`). */
  okCodes?: readonly number[];
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** Retries when another process holds the shadow index lock for a moment. */
const LOCK_RETRIES = 5;
/** Pause between lock retries; git's own operations on the shadow repo take milliseconds. */
const LOCK_RETRY_DELAY_MS = 40;

/** What differs between shadow repositories; the rest of the environment is the same for all (sharedEnv). */
function targetEnv(target: GitTarget): Record<string, string> {
  return { HOME: target.emptyDir, XDG_CONFIG_HOME: target.emptyDir, GIT_INDEX_FILE: target.indexFile };
}

function isolatedEnv(target: GitTarget): NodeJS.ProcessEnv {
  return { ...sharedEnv(), ...targetEnv(target) };
}

function sharedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith("GIT_")) delete env[key];
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: SNAPSHOT_AUTHOR.name,
    GIT_AUTHOR_EMAIL: SNAPSHOT_AUTHOR.email,
    GIT_COMMITTER_NAME: SNAPSHOT_AUTHOR.name,
    GIT_COMMITTER_EMAIL: SNAPSHOT_AUTHOR.email,
    LC_ALL: "C",
  };
}

function configFlags(target: GitTarget): string[] {
  const settings: Record<string, string> = {
    "core.hooksPath": target.emptyDir,
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.symlinks": "true",
    "core.fileMode": "true",
    "core.quotePath": "false",
    "core.fsmonitor": "false",
    "core.untrackedCache": "true",
    "commit.gpgSign": "false",
    "maintenance.auto": "false",
    "status.renames": "false",
    "diff.renames": "true",
    "advice.detachedHead": "false",
    "init.defaultBranch": "snapshots",
  };
  return Object.entries(settings).flatMap(([key, value]) => ["-c", `${key}=${value}`]);
}

function fullArgs(target: GitTarget, args: readonly string[]): string[] {
  return [...configFlags(target), `--git-dir=${target.gitDir}`, `--work-tree=${target.workTree}`, ...args];
}

/** Starts git on the shadow repository; callers own the child's streams. */
export function spawnGit(target: GitTarget, args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawn("git", fullArgs(target, args), { cwd: target.workTree, env: isolatedEnv(target), stdio: "pipe" });
}

/** A whole git command: through the long-lived helper (git-helper.ts), or spawned here when it cannot take it. */
function execGit(target: GitTarget, args: readonly string[], options: GitRunOptions): Promise<GitResult> {
  const throughHelper = runThroughHelper(
    "shadow-git",
    { env: targetEnv(target), cwd: target.workTree, argv: ["git", ...fullArgs(target, args)], input: options.input },
    sharedEnv,
  );
  // A helper that died mid-command (killed from outside) costs this command a direct spawn, not a failure.
  return throughHelper?.catch(() => spawnAndCollect(target, args, options)) ?? spawnAndCollect(target, args, options);
}

function spawnAndCollect(target: GitTarget, args: readonly string[], options: GitRunOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(target, args);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) =>
      reject(new WorldlineError("checkpoint:git_unavailable", `could not run git: ${error.message}`, { cause: error })),
    );
    child.on("close", (code) => {
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8"), code: code ?? -1 });
    });
    // A child that exits before reading its input makes the write fail with EPIPE; the exit code tells the story.
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function git(target: GitTarget, args: readonly string[], options: GitRunOptions = {}): Promise<GitResult> {
  for (let attempt = 0; ; attempt++) {
    const result = await execGit(target, args, options);
    if (result.code === 0 || options.okCodes?.includes(result.code)) return result;
    if (attempt < LOCK_RETRIES && /\.lock': File exists/.test(result.stderr)) {
      await sleep(LOCK_RETRY_DELAY_MS * (attempt + 1));
      continue;
    }
    throw new WorldlineError(
      "checkpoint:git_failed",
      `git ${args[0]} failed: ${result.stderr.trim() || `exit ${result.code}`}`,
      {
        details: { args, code: result.code },
      },
    );
  }
}

/** stdout as text, without the trailing newline. */
export async function gitText(target: GitTarget, args: readonly string[], options?: GitRunOptions): Promise<string> {
  const { stdout } = await git(target, args, options);
  return stdout.toString("utf8").replace(/\n$/, "");
}

/** Splits `-z` output into fields, dropping the empty tail. */
export function splitNul(output: Buffer | string): string[] {
  const text = typeof output === "string" ? output : output.toString("utf8");
  const fields = text.split("\0");
  if (fields.at(-1) === "") fields.pop();
  return fields;
}

/** Joins paths for a `-z --stdin` consumer. */
export function joinNul(paths: readonly string[]): string {
  return paths.map((path) => `${path}\0`).join("");
}
