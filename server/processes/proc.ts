import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

/** The fields of /proc/<pid>/stat the bridge uses. */
interface ProcStat {
  pid: number;
  /** R, S, D, … ; Z (zombie) and X (dead) are no longer running. */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Start time in clock ticks since boot (field 22): tells a reused pid from the process recorded. */
  startTicks: number;
}

/** Stat files read at once when listing every process: /proc reads are cheap, the thread pool (4) is shared. */
const STAT_READ_CONCURRENCY = 16;

const hasProcfs = process.platform === "linux";

function parseStat(pid: number, text: string): ProcStat {
  // The command name (field 2) may contain spaces and parentheses: the other fields resume after the last ")".
  // From there: state(3) ppid(4) pgrp(5) session(6) … starttime(22).
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return {
    pid,
    state: fields[0],
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    startTicks: Number(fields[19]),
  };
}

/** One process's stat, or undefined once it is gone (or without procfs). */
export async function readStat(pid: number): Promise<ProcStat | undefined> {
  if (!hasProcfs) return undefined;
  try {
    return parseStat(pid, await readFile(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined; // The process exited while we looked.
  }
}

/**
 * The same, read synchronously: for the moment right after a spawn, when the record of what
 * was started must be on disk before the bridge can die and leave it running.
 */
export function readStatSync(pid: number): ProcStat | undefined {
  if (!hasProcfs) return undefined;
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    // the process is gone (or /proc unreadable): no stat
    return undefined;
  }
}

/** Whether a process still runs: zombies are already dead, only their parent can reap them. */
function isRunning(stat: ProcStat): boolean {
  return stat.state !== "Z" && stat.state !== "X";
}

/** Every process on the machine (empty without procfs), read a bounded number at a time. */
export async function listProcesses(): Promise<ProcStat[]> {
  if (!hasProcfs) return [];
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name)).map(Number);
  const stats: ProcStat[] = [];
  let next = 0;
  const reader = async () => {
    while (next < pids.length) {
      const stat = await readStat(pids[next++]);
      if (stat) stats.push(stat);
    }
  };
  await Promise.all(Array.from({ length: STAT_READ_CONCURRENCY }, reader));
  return stats;
}

/**
 * Running processes belonging to a terminal: every descendant of the shell plus anything
 * still in its session and their descendants (node-pty makes the shell a session leader;
 * jobs get their own process groups, and a job whose shell died is reparented out of the
 * tree, so neither the group nor the tree alone is enough). Without procfs: the shell.
 */
export function terminalMembers(shellPid: number): Promise<number[]> {
  return membersOf(shellPid, (proc) => proc.session === shellPid);
}

/**
 * Running processes of a program started `detached` (its own process group, pgid = pid): its
 * descendants plus anything still in its group and their descendants. An agent's commands may
 * move to groups of their own (ACP terminals do), and one whose parent died leaves the tree.
 */
export function treeMembers(rootPid: number): Promise<number[]> {
  return membersOf(rootPid, (proc) => proc.pgrp === rootPid);
}

/**
 * Running processes of several roots at once, read from one listing of /proc: each terminal's
 * members (as `terminalMembers`) and each detached group's (as `treeMembers`). For the port list
 * of a session (server/preview), which looks at all of its terminals and tasks together.
 */
export function rootsMembers(roots: readonly { pid: number; kind: "terminal" | "group" }[]): Promise<number[]> {
  if (roots.length === 0) return Promise.resolve([]);
  const sessions = new Set(roots.filter((root) => root.kind === "terminal").map((root) => root.pid));
  const groups = new Set(roots.filter((root) => root.kind === "group").map((root) => root.pid));
  return membersOf(
    roots.map((root) => root.pid),
    (proc) => sessions.has(proc.session) || groups.has(proc.pgrp),
  );
}

/** The roots, every process `belongs` admits, and all their descendants, that still run. */
async function membersOf(
  rootPids: number | readonly number[],
  belongs: (proc: ProcStat) => boolean,
): Promise<number[]> {
  const roots = typeof rootPids === "number" ? [rootPids] : rootPids;
  if (!hasProcfs) return roots.filter((pid) => pidExists(pid));
  const processes = await listProcesses();
  const children = new Map<number, number[]>();
  for (const proc of processes) children.set(proc.ppid, [...(children.get(proc.ppid) ?? []), proc.pid]);
  const found = new Set<number>();
  const queue = [...roots, ...processes.filter(belongs).map((proc) => proc.pid)];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    if (found.has(pid)) continue;
    found.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return processes.filter((proc) => found.has(proc.pid) && isRunning(proc)).map((proc) => proc.pid);
}

/** Running processes in a process group (Linux only; empty elsewhere). */
export async function groupMembers(pgid: number): Promise<number[]> {
  // No process of the group exists at all (zombies included): no need to read /proc.
  if (!signalReaches(-pgid)) return [];
  return (await listProcesses()).filter((proc) => proc.pgrp === pgid && isRunning(proc)).map((proc) => proc.pid);
}

/**
 * Whether any running process is in the group. On Linux it reads /proc, because zombies whose
 * parent does not reap them would otherwise look alive forever; elsewhere it asks the kernel.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  if (!hasProcfs) return signalReaches(-pgid);
  return (await groupMembers(pgid)).length > 0;
}

/** Whether the kernel knows a process group of this id (members that are zombies included). */
export function groupExists(pgid: number): boolean {
  return signalReaches(-pgid);
}

/** Whether a process runs (a zombie does not). */
export async function pidRunning(pid: number): Promise<boolean> {
  if (!hasProcfs) return pidExists(pid);
  const stat = await readStat(pid);
  return stat !== undefined && isRunning(stat);
}

/** Whether a process (zombies included) with this pid exists, asked of the kernel with signal 0. */
export function pidExists(pid: number): boolean {
  return signalReaches(pid);
}

function signalReaches(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
