import { spawn } from "node:child_process";
import { WorldlineError, type ErrorCode } from "../errors";
import { runThroughHelper } from "../checkpoints";

/**
 * The user's own git, run on their repository and its worktrees. Unlike the checkpoints' shadow
 * repository, the user's configuration counts here (the author of a commit, remotes, credentials
 * helpers), so only the variables that would point git elsewhere are dropped. Never interactive:
 * a push that needs a password fails instead of waiting for one nobody will type.
 */
export interface GitOutput {
  stdout: string;
  stderr: string;
  code: number;
}

/** Variables inherited from whoever started the bridge that would make git act on another repository. */
const REDIRECTING =
  /^GIT_(DIR|WORK_TREE|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|COMMON_DIR|NAMESPACE|CEILING_DIRECTORIES|PREFIX)$/;

function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_EDITOR: "true",
    GIT_MERGE_AUTOEDIT: "no",
    LC_ALL: "C",
  };
  for (const key of Object.keys(env)) if (REDIRECTING.test(key)) delete env[key];
  return env;
}

export interface GitCall {
  cwd: string;
  args: readonly string[];
  input?: string;
  env?: Record<string, string>;
  /** Talks to a remote (push): spawned on its own so a slow remote holds up no other git call. */
  network?: boolean;
}

/** Runs git; the exit code is the caller's to judge. */
export async function runGit(call: GitCall): Promise<GitOutput> {
  const command = { cwd: call.cwd, argv: ["git", ...call.args], env: call.env ?? {}, input: call.input };
  const helped = call.network ? undefined : runThroughHelper("worktrees", command, baseEnv);
  const result: RawOutput = helped ? await helped : await spawnGit(call);
  return { stdout: result.stdout.toString("utf8"), stderr: result.stderr, code: result.code };
}

/** Runs git and returns its stdout; a failure is `code` with git's own words. */
export async function git(call: GitCall, code: ErrorCode = "worktree:git_failed"): Promise<string> {
  const result = await runGit(call);
  if (result.code !== 0) throw new WorldlineError(code, gitFailure(call.args, result));
  return result.stdout;
}

export function gitFailure(args: readonly string[], result: GitOutput): string {
  const said = (result.stderr.trim() || result.stdout.trim()).split("\n").slice(-4).join("\n");
  return `git ${args[0]} failed (exit ${result.code})${said ? `: ${said}` : ""}`;
}

/** What the checkpoints' git helper answers, and a direct spawn too. */
interface RawOutput {
  stdout: Buffer;
  stderr: string;
  code: number;
}

function spawnGit(call: GitCall): Promise<RawOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", call.args, { cwd: call.cwd, env: { ...baseEnv(), ...call.env } });
    const out: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", (error) =>
      reject(new WorldlineError("worktree:git_unavailable", `git could not start: ${error.message}`)),
    );
    child.on("close", (code) => resolve({ stdout: Buffer.concat(out), stderr, code: code ?? 1 }));
    child.stdin.end(call.input ?? "");
  });
}
