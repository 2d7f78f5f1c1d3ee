import { WorldlineError } from "../errors";
import { openLocalPty, shellEnv, type PtyProcess } from "../pty";

/** Output gathered before it is sent to the hub: fewer, larger frames while a shell floods. */
const SEND_BATCH_BYTES = 64 * 1024;
/** The longest output waits to be gathered; well under what a person notices in an echo. */
const SEND_BATCH_MS = 2;
/** Terminals a runner keeps open at once, all hubs' sessions together. */
const MAX_RUNNER_TERMINALS = 64;

interface RunnerTerminal {
  pty: PtyProcess;
  exited: Promise<void>;
}

/**
 * The shells of the hub's terminals on this machine. Each is a local pty (recorded for cleanup
 * after a crash, like the bridge's own) whose output is batched and sent as `runner.pty_data`;
 * it keeps running while the hub is away.
 */
export class RunnerTerminals {
  private readonly terminals = new Map<string, RunnerTerminal>();

  constructor(
    private readonly send: {
      data(ptyId: string, data: Buffer, route: string | undefined): void;
      exit(ptyId: string, exitCode: number | null, route: string | undefined): void;
    },
  ) {}

  /** `route`: the hub bridge that opened it, put on its output (server/protocol/runner.ts). */
  open(
    ptyId: string,
    spawn: { cwd: string; cols: number; rows: number; env: Record<string, string>; args?: string[] },
    route: string | undefined,
  ): number {
    if (this.terminals.has(ptyId)) throw new WorldlineError("runner:bad_request", `Terminal ${ptyId} is already open.`);
    if (this.terminals.size >= MAX_RUNNER_TERMINALS)
      throw new WorldlineError("pty:busy", `This runner already runs ${MAX_RUNNER_TERMINALS} terminals.`);
    const chunks: Buffer[] = [];
    let pending = 0;
    let timer: NodeJS.Timeout | null = null;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = null;
      if (pending === 0) return;
      this.send.data(ptyId, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, pending), route);
      chunks.length = 0;
      pending = 0;
    };
    const readBuffer = Buffer.allocUnsafe(64 * 1024);
    const pty = openLocalPty(
      {
        shell: process.env.SHELL ?? "bash",
        args: spawn.args ?? ["-l"],
        cwd: spawn.cwd,
        env: { ...shellEnv(process.env), ...spawn.env },
        cols: spawn.cols,
        rows: spawn.rows,
      },
      {
        buffer: () => readBuffer,
        callback: (length) => {
          // Copied: the read buffer is reused by the next read.
          chunks.push(Buffer.from(readBuffer.subarray(0, length)));
          pending += length;
          if (pending >= SEND_BATCH_BYTES) flush();
          else timer ??= setTimeout(flush, SEND_BATCH_MS);
        },
      },
    );
    const exited = new Promise<void>((resolve) =>
      pty.onExit(({ exitCode, signal }) => {
        flush();
        pty.release();
        this.terminals.delete(ptyId);
        this.send.exit(ptyId, signal ? null : exitCode, route);
        resolve();
      }),
    );
    this.terminals.set(ptyId, { pty, exited });
    return pty.pid;
  }

  /** The shells' pids (the roots of what their sessions run here). */
  pids(): number[] {
    return [...this.terminals.values()].map((terminal) => terminal.pty.pid);
  }

  input(ptyId: string, data: string): void {
    this.get(ptyId).pty.write(data);
  }

  resize(ptyId: string, cols: number, rows: number): void {
    this.get(ptyId).pty.resize(cols, rows);
  }

  flow(ptyId: string, paused: boolean): void {
    const { pty } = this.get(ptyId);
    if (paused) pty.pause();
    else pty.resume();
  }

  async kill(ptyId: string): Promise<void> {
    const terminal = this.terminals.get(ptyId);
    if (!terminal) return;
    await terminal.pty.kill(terminal.exited);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.terminals.keys()].map((id) => this.kill(id)));
  }

  private get(ptyId: string): RunnerTerminal {
    const terminal = this.terminals.get(ptyId);
    if (!terminal) throw new WorldlineError("pty:not_found", `No terminal ${ptyId} on this runner.`);
    return terminal;
  }
}
