import { spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A long-lived `sh` that starts git commands for the bridge. Spawning from the bridge forks a
 * process of several hundred MB (page tables copied, the event loop blocked): 5–70 ms per git
 * call on a busy 2-core machine, three or more calls per workspace snapshot, i.e. per agent
 * step. Forking this small shell costs about a millisecond. Inputs and outputs travel through
 * files in a private temp folder (binary-safe, no framing), the command line through a pipe;
 * the shell answers `<id> <exit code>` per command, in order. Those files are written, read and
 * removed synchronously: each takes microseconds, while an asynchronous round trip through the
 * thread pool waited behind whatever else the event loop had to do (a snapshot took 11–15 ms of
 * wall time at each agent step, most of it in line for six file operations).
 * The shell `eval`s each command line, which is built here with every argument quoted (`quote`);
 * Node has no supported way to spawn from a process other than itself. Kept for its figure
 * (bench/README.md, "The long-lived git helper"): 1.8 ms a git command against 17.9 ms for a process each.
 */

export interface HelperCommand {
  /** Variables set for this command only (the shell itself runs with the caller's base environment). */
  env: Record<string, string>;
  cwd: string;
  argv: readonly string[];
  input?: string | Buffer;
}

export interface HelperResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/**
 * The shell's loop. It ends when its stdin does, which is when the bridge exits, however it exits
 * (a killed bridge never removes the folder itself): the shell removes the temp folder then.
 */
const SCRIPT = `
while IFS= read -r line; do
  id=\${line%% *}
  eval "\${line#* }" <"$WL_IO/$id.in" >"$WL_IO/$id.out" 2>"$WL_IO/$id.err"
  echo "$id $?"
done
rm -rf "$WL_IO"
`;

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

class GitHelper {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly io: string;
  private readonly pending = new Map<string, (code: number | Error) => void>();
  private counter = 0;
  private buffered = "";
  dead = false;

  constructor(baseEnv: () => NodeJS.ProcessEnv) {
    this.io = mkdtempSync(join(tmpdir(), "worldline-git-"));
    // The shell's own stderr is the bridge's (each command's goes to its file): an idle helper holds no pipe open.
    this.child = spawn("/bin/sh", ["-c", SCRIPT], {
      env: { ...baseEnv(), WL_IO: this.io },
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.child.stdout.setEncoding("utf8").on("data", (chunk: string) => this.onData(chunk));
    this.child.on("error", (error) => this.fail(error));
    this.child.on("exit", () => this.fail(new Error("the git helper exited")));
    this.child.stdin.on("error", (error) => this.fail(error));
    this.idle();
  }

  async run(command: HelperCommand): Promise<HelperResult> {
    const id = `${++this.counter}`;
    const base = join(this.io, id);
    const line =
      `cd ${quote(command.cwd)} && ` +
      Object.entries(command.env)
        .map(([key, value]) => `${key}=${quote(value)} `)
        .join("") +
      command.argv.map(quote).join(" ");
    try {
      writeFileSync(`${base}.in`, command.input ?? "");
      const code = await new Promise<number>((resolve, reject) => {
        this.pending.set(id, (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome)));
        this.busy();
        this.child.stdin.write(`${id} ${line}\n`);
      });
      return { stdout: readFileSync(`${base}.out`), stderr: readFileSync(`${base}.err`, "utf8"), code };
    } finally {
      for (const ext of [".in", ".out", ".err"]) rmSync(`${base}${ext}`, { force: true });
    }
  }

  /** True when the command can go through the line protocol (no newline anywhere, plain variable names). */
  static accepts(command: HelperCommand): boolean {
    const parts = [command.cwd, ...command.argv, ...Object.values(command.env)];
    return parts.every((part) => !part.includes("\n")) && Object.keys(command.env).every((key) => VARIABLE.test(key));
  }

  private onData(chunk: string): void {
    this.buffered += chunk;
    let end: number;
    while ((end = this.buffered.indexOf("\n")) >= 0) {
      const [id, code] = this.buffered.slice(0, end).split(" ");
      this.buffered = this.buffered.slice(end + 1);
      const settle = this.pending.get(id);
      this.pending.delete(id);
      settle?.(Number(code));
    }
    if (this.pending.size === 0) this.idle();
  }

  private fail(error: Error): void {
    if (this.dead) return;
    this.dead = true;
    for (const settle of this.pending.values()) settle(error);
    this.pending.clear();
    rmSync(this.io, { recursive: true, force: true });
  }

  /** While commands run, the helper keeps the process alive (a snapshot at shutdown completes)… */
  private busy(): void {
    this.child.ref();
    (this.child.stdout as Socket).ref();
  }

  /** …and idle, it never does: the bridge exits as if it were not there (the shell then sees EOF and ends). */
  private idle(): void {
    this.child.unref();
    (this.child.stdout as Socket).unref();
    (this.child.stdin as Socket).unref();
  }
}

/** One helper per base environment (its name), shared by every caller of that name. */
const helpers = new Map<string, GitHelper>();

/**
 * Runs one command through the helper called `name`, starting it with `baseEnv` on first use
 * (and again after it died). Undefined when the command cannot go through it (or
 * WORLDLINE_GIT_HELPER=0); the caller spawns directly then.
 */
export function runThroughHelper(
  name: string,
  command: HelperCommand,
  baseEnv: () => NodeJS.ProcessEnv,
): Promise<HelperResult> | undefined {
  if (process.env.WORLDLINE_GIT_HELPER === "0" || !GitHelper.accepts(command)) return undefined;
  let helper = helpers.get(name);
  if (!helper || helper.dead) {
    helper = new GitHelper(baseEnv);
    helpers.set(name, helper);
  }
  return helper.run(command);
}
