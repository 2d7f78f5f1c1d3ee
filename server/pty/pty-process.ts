import fs from "node:fs";
import type * as nodePty from "node-pty";
import { forgetProcess, killProcesses, pidExists, recordProcess } from "../processes";
import { spawnPty, type PtyReads } from "./spawn";

/** How a terminal's shell starts: its pty's size, folder and environment. */
export interface PtySpawn {
  shell: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
}

/**
 * The shell behind a Terminal: on this machine (node-pty) or on a runner's (server/runners).
 * Output arrives through `reads`, the buffers the Terminal gathers batches in.
 */
export interface PtyProcess {
  readonly pid: number;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  /** Flow control: stop reading output until `resume`. */
  pause(): void;
  resume(): void;
  onExit(listener: (exit: { exitCode: number; signal?: number }) => void): void;
  /** False once the shell is gone (checked while paused, when no exit can be read). */
  alive(): boolean;
  /** Ends the shell and everything it started; resolves once it is gone. */
  kill(leaderExited: Promise<unknown>): Promise<void>;
  /** After the exit: releases what the process held. */
  release(): void;
}

/** Opens the shell of a terminal; the Terminal passes where its output goes. */
export type PtyOpener = (spawn: PtySpawn, reads: PtyReads) => PtyProcess;

/** A shell on this machine's node-pty, recorded for cleanup after a crash. */
export const openLocalPty: PtyOpener = (spawn, reads) => {
  const pty = spawnPty(
    spawn.shell,
    spawn.args,
    {
      name: "xterm-256color",
      cols: spawn.cols,
      rows: spawn.rows,
      cwd: spawn.cwd,
      env: spawn.env,
      // Raw bytes: never decoded on the bridge, so a UTF-8 sequence split across reads stays intact.
      encoding: null,
    },
    reads,
  );
  // When the last slave fd closes, Linux makes the master return EIO and node-pty drops
  // whatever output was still unread (the end of a command's output, or more after a
  // pause). Holding a slave fd ourselves keeps the output readable until the exit.
  let slaveFd = openSlave(pty);
  // The shell leads its own session (jobs get their own groups): recorded for cleanup after a crash.
  recordProcess(pty.pid, "session", "terminal");
  return {
    pid: pty.pid,
    write: (data) => pty.write(data),
    resize: (cols, rows) => pty.resize(cols, rows),
    pause: () => pty.pause(),
    resume: () => pty.resume(),
    onExit: (listener) => void pty.onExit(listener),
    alive: () => pidExists(pty.pid),
    kill: (leaderExited) => killProcesses({ kind: "terminal", shellPid: pty.pid }, { leaderExited }),
    release: () => {
      forgetProcess(pty.pid);
      if (slaveFd !== null) fs.closeSync(slaveFd);
      slaveFd = null;
    },
  };
};

function openSlave(pty: nodePty.IPty): number | null {
  const name = (pty as nodePty.IPty & { ptsName?: string }).ptsName;
  if (!name) return null;
  try {
    return fs.openSync(name, fs.constants.O_RDWR | fs.constants.O_NOCTTY);
  } catch {
    return null; // Only a lost tail of output is at stake, never the terminal itself.
  }
}
