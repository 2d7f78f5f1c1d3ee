import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Process groups and terminal sessions the bridge started, recorded on disk under
 * WORLDLINE_HOME so that a bridge killed with SIGKILL (which runs no cleanup) has
 * its leftovers killed by the next bridge at start. A record names a process group
 * (shell commands, background tasks: `detached`, so pgid = pid) or a terminal
 * session (an interactive shell puts each job in its own group, but they all share
 * the shell's session id). The leader's start time guards against a reused pid:
 * only processes of that group/session started no earlier than the leader are killed.
 */
export interface ProcessRecord {
  /** The process group id (kind "group") or session id (kind "session"); the leader's pid. */
  id: number;
  kind: "group" | "session";
  /** What it was, for the log: `shell`, `terminal`, … */
  label: string;
  /** The leader's start time in clock ticks since boot (/proc/<pid>/stat field 22). */
  startTicks: number;
  /** The bridge that started it: a record of a bridge that is still running is left alone. */
  ownerPid: number;
}

export class ProcessRecords {
  constructor(private readonly dir: string) {}

  add(id: number, kind: ProcessRecord["kind"], label: string): void {
    const startTicks = procStat(id)?.startTicks;
    if (startTicks === undefined) return;
    const record: ProcessRecord = { id, kind, label, startTicks, ownerPid: process.pid };
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(this.file(id), JSON.stringify(record));
    } catch {
      // Recording is best effort: a failure only means no cleanup after a crash.
    }
  }

  remove(id: number): void {
    rmSync(this.file(id), { force: true });
  }

  list(): ProcessRecord[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const records: ProcessRecord[] = [];
    for (const name of names) {
      try {
        records.push(JSON.parse(readFileSync(path.join(this.dir, name), "utf8")) as ProcessRecord);
      } catch {
        rmSync(path.join(this.dir, name), { force: true });
      }
    }
    return records;
  }

  /**
   * Kills what dead bridges left behind; returns the pids killed. Records of a live
   * bridge (`worldline acp` or `run` sharing the home) are kept.
   */
  cleanupOrphans(): number[] {
    const killed: number[] = [];
    const stats = process.platform === "linux" ? allProcStats() : [];
    for (const record of this.list()) {
      if (record.ownerPid !== process.pid && isAlive(record.ownerPid)) continue;
      const members = stats.filter(
        (stat) =>
          (record.kind === "group" ? stat.pgrp === record.id : stat.session === record.id) &&
          stat.startTicks >= record.startTicks &&
          stat.pid !== process.pid,
      );
      for (const member of members) {
        try {
          process.kill(member.pid, "SIGKILL");
          killed.push(member.pid);
        } catch {
          // Already gone.
        }
      }
      this.remove(record.id);
    }
    return killed;
  }

  private file(id: number): string {
    return path.join(this.dir, `${id}.json`);
  }
}

let active: ProcessRecords | undefined;

/** The bridge sets its records here; tools and terminals record through the functions below. */
export function setProcessRecords(records: ProcessRecords | undefined): void {
  active = records;
}

export function activeProcessRecords(): ProcessRecords | undefined {
  return active;
}

export function recordProcess(id: number, kind: ProcessRecord["kind"], label: string): void {
  active?.add(id, kind, label);
}

export function forgetProcess(id: number): void {
  active?.remove(id);
}

interface ProcStat {
  pid: number;
  pgrp: number;
  session: number;
  startTicks: number;
}

function procStat(pid: number): ProcStat | undefined {
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

function parseStat(pid: number, stat: string): ProcStat | undefined {
  // Fields after the parenthesised command name: state(3) ppid(4) pgrp(5) session(6) … starttime(22).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z") return undefined;
  return { pid, pgrp: Number(fields[2]), session: Number(fields[3]), startTicks: Number(fields[19]) };
}

function allProcStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat) stats.push(stat);
  }
  return stats;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
