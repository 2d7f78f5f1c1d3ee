import { spawn, type ChildProcess } from "node:child_process";
import type { ExitInfo, HostProcess } from "./types";
import { forgetProcess, groupAlive, killProcesses, recordProcess } from "../processes";

/** After the group is gone, how long to wait for the shell's exit event before resolving anyway. */
const EXIT_WAIT_MS = 3_000;
/** After the shell exits, how long its output may keep draining before leftovers are stopped. */
export const POST_EXIT_DRAIN_MS = 300;

export interface StartOptions {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, then stdin is closed (commands never wait for input). */
  stdin?: string;
  onOutput: (chunk: string) => void;
}

/**
 * One bash command in its own process group (`detached`), so that it and
 * everything it starts can be signalled at once. Output of stdout and stderr
 * arrives merged, in order of arrival.
 */
export class ProcessGroup implements HostProcess {
  readonly pid: number;
  readonly exited: Promise<ExitInfo>;
  private readonly child: ChildProcess;
  private readonly streamsClosed: Promise<void>;
  private stopping: Promise<void> | undefined;

  constructor(options: StartOptions) {
    // No rc files: bash runs ~/.bashrc even for `-c` when its stdin is a socket (as Node's pipes are),
    // and a profile can block a command for a minute (pyenv's rehash lock) or change its environment.
    this.child = spawn("/bin/bash", ["--norc", "--noprofile", "-c", options.command], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    if (this.child.pid === undefined) throw new Error("bash could not be started");
    this.pid = this.child.pid;
    // Recorded on disk so that a bridge killed with SIGKILL gets it cleaned up at its next start.
    recordProcess(this.pid, "group", "shell");
    const child = this.child;
    child.stdout?.setEncoding("utf8").on("data", options.onOutput);
    child.stderr?.setEncoding("utf8").on("data", options.onOutput);
    child.stdin?.on("error", () => {
      // The command may exit without reading stdin (EPIPE); nothing to do.
    });
    child.stdin?.end(options.stdin ?? "");
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal }));
      child.once("error", () => resolve({ code: null, signal: null }));
    });
    this.streamsClosed = new Promise((resolve) => child.once("close", () => resolve()));
  }

  /** Waits for the shell to exit and its output to drain; leftovers holding the pipe are stopped. */
  async finish(): Promise<{ exit: ExitInfo; leftoversStopped: boolean }> {
    const exit = await this.exited;
    const drained = await Promise.race([
      this.streamsClosed.then(() => true),
      delay(POST_EXIT_DRAIN_MS).then(() => false),
    ]);
    const leftovers = await groupAlive(this.pid);
    if (leftovers) await this.stop();
    else if (!drained) this.destroyStreams();
    forgetProcess(this.pid);
    return { exit, leftoversStopped: leftovers };
  }

  /**
   * SIGTERM to the whole group, SIGKILL after the grace period, then resolves
   * once no process of the group is left, even if one still holds the pipe.
   */
  stop(graceMs?: number): Promise<void> {
    this.stopping ??= (async () => {
      await killProcesses({ kind: "group", pgid: this.pid }, { graceMs, leaderExited: this.exited });
      await Promise.race([this.exited, delay(EXIT_WAIT_MS)]);
      // Give buffered output a moment to arrive, but never wait on the pipe.
      await Promise.race([this.streamsClosed, delay(50)]);
      this.destroyStreams();
      forgetProcess(this.pid);
    })();
    return this.stopping;
  }

  private destroyStreams(): void {
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    this.child.stdin?.destroy();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
