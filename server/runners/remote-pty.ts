import { randomUUID } from "node:crypto";
import { errorMessage } from "../errors";
import type { PtyOpener, PtyProcess, PtyReads, PtySpawn } from "../pty";
import type { RunnerLink } from "./link";

/** The most of one runner chunk copied into a Terminal's read buffer at a time (its reads are up to 64 KB). */
const READ_SLICE_BYTES = 16 * 1024;

/**
 * A terminal's shell on a runner's machine. The hub's Terminal (screen mirror, viewers, replay,
 * flow control) is unchanged: the runner's pty output is fed into its read buffers, and input,
 * resizes, pauses and the kill go back as requests. While the runner is away the shell keeps
 * running there; its output waits in the runner's connection and arrives when it is back.
 * A terminal is the person's, not the turn's: its requests carry no claim and are not fenced.
 */
export function remotePtyOpener(link: RunnerLink, log: (line: string) => void): PtyOpener {
  return (spawn, reads) => new RemotePty(link, spawn, reads, log);
}

class RemotePty implements PtyProcess {
  pid = 0;
  private readonly id = randomUUID();
  private readonly exitListeners: ((exit: { exitCode: number; signal?: number }) => void)[] = [];
  private exited = false;

  constructor(
    private readonly link: RunnerLink,
    spawn: PtySpawn,
    private readonly reads: PtyReads,
    private readonly log: (line: string) => void,
  ) {
    link.trackPty(this.id, { data: (chunk) => this.feed(chunk), exit: (code) => this.end(code) });
    const { cwd, cols, rows, env, args } = spawn;
    this.link.call({ op: "pty.open", ptyId: this.id, cwd, cols, rows, env, args }).then(
      ({ pid }) => (this.pid = pid),
      (error: unknown) => {
        this.log(`a terminal on runner "${link.name}" did not open: ${errorMessage(error)}`);
        this.end(null);
      },
    );
  }

  write(data: string): void {
    this.send({ op: "pty.input", ptyId: this.id, data });
  }

  resize(cols: number, rows: number): void {
    this.send({ op: "pty.resize", ptyId: this.id, cols, rows });
  }

  pause(): void {
    this.send({ op: "pty.flow", ptyId: this.id, paused: true });
  }

  resume(): void {
    this.send({ op: "pty.flow", ptyId: this.id, paused: false });
  }

  onExit(listener: (exit: { exitCode: number; signal?: number }) => void): void {
    this.exitListeners.push(listener);
  }

  alive(): boolean {
    return !this.exited;
  }

  async kill(leaderExited: Promise<unknown>): Promise<void> {
    if (this.exited) return;
    await this.link.call({ op: "pty.kill", ptyId: this.id }).catch((error: unknown) => {
      // A runner that cannot be reached: the terminal is ended here; its shell ends with the runner's process.
      this.log(`terminal ${this.id} on runner "${this.link.name}" not killed: ${errorMessage(error)}`);
      this.end(null);
    });
    await leaderExited;
  }

  release(): void {
    // Nothing is held on this machine.
  }

  private send(operation: Parameters<RunnerLink["call"]>[0]): void {
    if (this.exited) return;
    // Ordered by the connection; a failure means the runner is gone, which its exit reports.
    void this.link.call(operation).catch(() => undefined);
  }

  private feed(chunk: Uint8Array): void {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let offset = 0; offset < bytes.length;) {
      const target = this.reads.buffer();
      const copied = bytes.copy(target, 0, offset, Math.min(bytes.length, offset + READ_SLICE_BYTES));
      offset += copied;
      this.reads.callback(copied, target);
    }
  }

  private end(exitCode: number | null): void {
    if (this.exited) return;
    this.exited = true;
    // node-pty's shape: a shell killed by a signal reports one; an unknown end reads as killed.
    const exit = exitCode === null ? { exitCode: 0, signal: 9 } : { exitCode };
    for (const listener of this.exitListeners) listener(exit);
  }
}
