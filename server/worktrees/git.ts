import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { WorldlineError, type ErrorCode } from "../errors";
import { runThroughHelper } from "../checkpoints";
import type { ToolHost } from "../host";

/**
 * The user's own git, run on their repository and its worktrees, on the machine that holds them.
 * Unlike the checkpoints' shadow repository, the user's configuration counts here (the author of a
 * commit, remotes, credentials helpers), so only the variables that would point git elsewhere are
 * dropped. Never interactive: a push that needs a password fails instead of waiting for one nobody
 * will type.
 */
export interface GitOutput {
  stdout: string;
  stderr: string;
  code: number;
}

/** Variables inherited from whoever started the bridge (or runner) that would make git act on another repository. */
const REDIRECTING = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_CEILING_DIRECTORIES",
  "GIT_PREFIX",
];

/** What every call sets, on this machine or a runner's. */
const GIT_ENV = { GIT_TERMINAL_PROMPT: "0", GIT_EDITOR: "true", GIT_MERGE_AUTOEDIT: "no", LC_ALL: "C" };

function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV };
  for (const key of REDIRECTING) delete env[key];
  return env;
}

/** A program (git, or `mkdir`/`cp`/`rm`/`test` for the folders around it) run with git's environment. */
export interface ProgramCall {
  cwd: string;
  argv: readonly string[];
  input?: string;
  env?: Record<string, string>;
  /** Talks to a remote (push): spawned on its own so a slow remote holds up no other git call. */
  network?: boolean;
}

/**
 * Where a worktree's git commands and file checks run: this machine, or the session's runner
 * through its ToolHost. Chosen once per session (`gitHostOf`); nothing else in server/worktrees
 * tells one from the other.
 */
export interface GitHost {
  /** Runs the program; the exit code is the caller's to judge. */
  run(call: ProgramCall): Promise<GitOutput>;
  stat: ToolHost["stat"];
  readText: ToolHost["readText"];
  readDir: ToolHost["readDir"];
}

/**
 * The session host's git: on this machine through the checkpoints' long-lived helper shell
 * (cheap forks); on a runner as one command through its `exec`, which runs it there.
 */
export function gitHostOf(host: ToolHost): GitHost {
  return {
    run: host.runner === null ? runHere : (call) => runThroughExec(host, call),
    stat: (file) => host.stat(file),
    readText: (file) => host.readText(file),
    readDir: (dir) => host.readDir(dir),
  };
}

export interface GitCall {
  cwd: string;
  args: readonly string[];
  input?: string;
  env?: Record<string, string>;
  network?: boolean;
}

/** Runs git on the host; the exit code is the caller's to judge. */
export function runGit(host: GitHost, call: GitCall): Promise<GitOutput> {
  const { args, ...rest } = call;
  return host.run({ ...rest, argv: ["git", ...args] });
}

/** Runs git and returns its stdout; a failure is `code` with git's own words. */
export async function git(host: GitHost, call: GitCall, code: ErrorCode = "worktree:git_failed"): Promise<string> {
  const result = await runGit(host, call);
  if (result.code !== 0) throw new WorldlineError(code, gitFailure(call.args, result));
  return result.stdout;
}

export function gitFailure(args: readonly string[], result: GitOutput): string {
  const said = (result.stderr.trim() || result.stdout.trim()).split("\n").slice(-4).join("\n");
  return `git ${args[0]} failed (exit ${result.code})${said ? `: ${said}` : ""}`;
}

/** `mkdir -p` on the host, run in `cwd` (a folder the host serves: a runner runs nothing elsewhere). */
export async function makeDir(host: GitHost, cwd: string, dir: string): Promise<void> {
  const made = await host.run({ cwd, argv: ["mkdir", "-p", "--", dir] });
  if (made.code !== 0) throw new WorldlineError("worktree:failed", `Could not make ${dir}: ${made.stderr.trim()}`);
}

/** `rm -rf` on the host, run beside `target` (its repository may be gone): what is absent already is fine. */
export async function removeTree(host: GitHost, target: string): Promise<void> {
  await host.run({ cwd: path.dirname(target), argv: ["rm", "-rf", "--", target] });
}

async function runHere(call: ProgramCall): Promise<GitOutput> {
  const command = { cwd: call.cwd, argv: call.argv, env: call.env ?? {}, input: call.input };
  const helped = call.network ? undefined : runThroughHelper("worktrees", command, baseEnv);
  const result = helped ? await helped : await spawnHere(call);
  return { stdout: result.stdout.toString("utf8"), stderr: result.stderr, code: result.code };
}

/** What the checkpoints' git helper answers, and a direct spawn too. */
interface RawOutput {
  stdout: Buffer;
  stderr: string;
  code: number;
}

function spawnHere(call: ProgramCall): Promise<RawOutput> {
  return new Promise((resolve, reject) => {
    const [program, ...args] = call.argv;
    const child = spawn(program, args, { cwd: call.cwd, env: { ...baseEnv(), ...call.env } });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", (error) =>
      reject(new WorldlineError("worktree:git_unavailable", `${program} could not start: ${error.message}`)),
    );
    child.on("close", (code) => resolve({ stdout: Buffer.concat(out), stderr, code: code ?? 1 }));
    child.stdin.end(call.input ?? "");
  });
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * One command through the host's `exec` (a runner's: it runs on the runner's machine, in a folder
 * it serves). `exec` hands back stdout and stderr as one stream, so stderr goes to a temp file on
 * that machine and follows stdout behind a marker no output can guess.
 */
async function runThroughExec(host: ToolHost, call: ProgramCall): Promise<GitOutput> {
  const marker = `--worldline-stderr-${randomUUID()}--`;
  const command = [
    `unset ${REDIRECTING.join(" ")}`,
    "wl_err=$(mktemp) || exit 125",
    `${call.argv.map(quote).join(" ")} 2>"$wl_err"`,
    "wl_code=$?",
    `printf '\\n%s\\n' ${quote(marker)}`,
    'cat "$wl_err"; rm -f "$wl_err"',
    'exit "$wl_code"',
  ].join("\n");
  let output = "";
  const running = await host.exec({
    command,
    cwd: call.cwd,
    env: { ...GIT_ENV, ...call.env },
    stdin: call.input,
    onOutput: (chunk) => (output += chunk),
  });
  const { exit } = await running.finish();
  const at = output.indexOf(`\n${marker}\n`);
  // No marker: the command was stopped before it printed one; all there is counts as stdout.
  if (at < 0) return { stdout: output, stderr: "", code: exit.code ?? 1 };
  return { stdout: output.slice(0, at), stderr: output.slice(at + marker.length + 2), code: exit.code ?? 1 };
}
