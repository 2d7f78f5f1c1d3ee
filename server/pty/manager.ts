import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { WorldlineError } from "../errors";
import { DEFAULT_COLS, DEFAULT_ROWS, MAX_TERMINALS, MAX_TERMINALS_PER_SESSION } from "./limits";
import { openLocalPty, type PtyOpener } from "./pty-process";
import { Terminal } from "./terminal";

export interface TerminalInfo {
  terminalId: string;
  sessionId: string;
  title: string;
  pid: number;
  cols: number;
  rows: number;
  viewers: number;
  createdAt: string;
}

/** Lifecycle notifications: the transport turns them into session events and socket messages. */
export interface PtyManagerEvents {
  opened?(info: TerminalInfo): void;
  renamed?(info: TerminalInfo): void;
  closed?(info: TerminalInfo, exitCode: number | null): void;
}

export interface PtyManagerOptions {
  /**
   * The folder a session's shells start in and how a shell opens there: its host's (server/host),
   * this machine's `localPtyOpener` or a runner's.
   */
  terminalsOf(sessionId: string): Promise<{ cwd: string; open: PtyOpener }>;
  events?: PtyManagerEvents;
}

/** Every terminal of every session on this bridge. */
export class PtyManager {
  private readonly terminals = new Map<string, Terminal>();
  private readonly closing = new Map<string, Promise<number | null>>();
  private readonly listeners = new Set<PtyManagerEvents>();
  /** Terminals are numbered per session ("Terminal 1" in each), as an editor numbers them per window. */
  private readonly counters = new Map<string, number>();

  constructor(private readonly options: PtyManagerOptions) {
    if (options.events) this.listeners.add(options.events);
  }

  /** Adds a lifecycle listener; returns its remover. */
  on(events: PtyManagerEvents): () => void {
    this.listeners.add(events);
    return () => this.listeners.delete(events);
  }

  /** `command`: run that line in the login shell instead of an interactive one (a worktree's setup); the terminal ends with it. */
  async create(
    sessionId: string,
    input: { title?: string; cols?: number; rows?: number; command?: string } = {},
  ): Promise<TerminalInfo> {
    const { cwd, open } = await this.options.terminalsOf(sessionId);
    if (this.list(sessionId).length >= MAX_TERMINALS_PER_SESSION) {
      throw new WorldlineError(
        "pty:busy",
        `This session already has ${MAX_TERMINALS_PER_SESSION} terminals; close one first.`,
      );
    }
    if (this.terminals.size >= MAX_TERMINALS)
      throw new WorldlineError("pty:busy", `The bridge already runs ${MAX_TERMINALS} terminals; close some first.`);
    const id = `t-${randomUUID()}`;
    const terminal = new Terminal({
      id,
      sessionId,
      title: input.title ?? `Terminal ${this.nextNumber(sessionId)}`,
      cwd,
      // The host's login shell, with the host's own environment (the opener adds it).
      shell: "",
      args: input.command ? ["-l", "-c", input.command] : ["-l"],
      env: { WORLDLINE_TERMINAL_ID: id },
      open,
      cols: input.cols ?? DEFAULT_COLS,
      rows: input.rows ?? DEFAULT_ROWS,
      onExit: (closed, exitCode) => {
        this.terminals.delete(closed.id);
        for (const listener of this.listeners) listener.closed?.(info(closed), exitCode);
      },
    });
    this.terminals.set(terminal.id, terminal);
    for (const listener of this.listeners) listener.opened?.(info(terminal));
    return info(terminal);
  }

  /** Terminals of a session, oldest first. */
  list(sessionId: string): TerminalInfo[] {
    return [...this.terminals.values()].filter((terminal) => terminal.sessionId === sessionId).map(info);
  }

  get(sessionId: string, terminalId: string): Terminal {
    const terminal = this.terminals.get(terminalId);
    if (!terminal || terminal.sessionId !== sessionId)
      throw new WorldlineError("pty:not_found", `No terminal "${terminalId}" in this session.`);
    return terminal;
  }

  rename(sessionId: string, terminalId: string, title: string): TerminalInfo {
    const terminal = this.get(sessionId, terminalId);
    terminal.title = title;
    for (const listener of this.listeners) listener.renamed?.(info(terminal));
    return info(terminal);
  }

  /** Kills the terminal's process tree; resolves after its exit was announced. */
  close(sessionId: string, terminalId: string): Promise<number | null> {
    const terminal = this.get(sessionId, terminalId);
    let closing = this.closing.get(terminalId);
    if (!closing) {
      closing = terminal.close().finally(() => this.closing.delete(terminalId));
      this.closing.set(terminalId, closing);
    }
    return closing;
  }

  /** The terminal used last in the session (input, resize, creation), if any. */
  active(sessionId: string): Terminal | undefined {
    let best: Terminal | undefined;
    for (const terminal of this.terminals.values()) {
      if (terminal.sessionId === sessionId && (!best || terminal.lastActiveAt >= best.lastActiveAt)) best = terminal;
    }
    return best;
  }

  /** Runs one line in the session's active terminal, opening one if there is none. */
  async run(sessionId: string, line: string): Promise<TerminalInfo> {
    const terminal = this.active(sessionId) ?? this.get(sessionId, (await this.create(sessionId)).terminalId);
    terminal.input(null, `${line}\r`);
    return info(terminal);
  }

  private nextNumber(sessionId: string): number {
    const next = (this.counters.get(sessionId) ?? 0) + 1;
    this.counters.set(sessionId, next);
    return next;
  }

  async closeSession(sessionId: string): Promise<void> {
    this.counters.delete(sessionId);
    // One terminal failing to close must not keep the others open.
    await Promise.all(
      this.list(sessionId).map((terminal) => this.close(sessionId, terminal.terminalId).catch(() => null)),
    );
  }

  async closeAll(): Promise<void> {
    // One terminal failing to close must not keep the others open.
    await Promise.all(
      [...this.terminals.values()].map((terminal) => this.close(terminal.sessionId, terminal.id).catch(() => null)),
    );
  }
}

function info(terminal: Terminal): TerminalInfo {
  return {
    terminalId: terminal.id,
    sessionId: terminal.sessionId,
    title: terminal.title,
    pid: terminal.pid,
    ...terminal.size,
    viewers: terminal.viewerCount,
    createdAt: new Date(terminal.createdAt).toISOString(),
  };
}

/**
 * Terminals on this machine (LocalWorkspaceHost.openPty): node-pty running `shell` (default `$SHELL`,
 * then bash) with the user's environment under the terminal's own variables, in the workspace, or
 * in the bridge's folder when the workspace is gone.
 */
export function localPtyOpener(options: { shell?: string; env?: NodeJS.ProcessEnv } = {}): PtyOpener {
  return (spawn, reads) =>
    openLocalPty(
      {
        ...spawn,
        shell: spawn.shell || options.shell || process.env.SHELL || "bash",
        cwd: fs.existsSync(spawn.cwd) ? spawn.cwd : process.cwd(),
        env: { ...shellEnv(options.env ?? process.env), ...spawn.env },
      },
      reads,
    );
}

/** The user's environment for an interactive shell, minus what belongs to the bridge itself. */
export function shellEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    // The bridge's secrets and Node's own settings don't leak into the user's shells.
    if (key === "WORLDLINE_TOKEN" || key === "OPENAI_API_KEY" || key.startsWith("NODE_") || key.startsWith("npm_"))
      continue;
    result[key] = value;
  }
  result.TERM = "xterm-256color";
  result.COLORTERM = "truecolor";
  result.TERM_PROGRAM = "worldline";
  return result;
}
