import fs from "node:fs";
import { KILL_GRACE_MS } from "./limits";

/** How often survivors are checked during the grace period. */
const KILL_POLL_MS = 25;

interface ProcStat {
  pid: number;
  ppid: number;
  session: number;
  state: string;
}

function readStat(pid: number): ProcStat | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may contain spaces and parentheses: fields resume after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, state: fields[0], ppid: Number(fields[1]), session: Number(fields[3]) };
  } catch {
    return null; // The process exited while we looked.
  }
}

function allProcesses(): ProcStat[] {
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return []; // No procfs (not Linux): only the shell itself can be signalled.
  }
  return entries.filter((name) => /^\d+$/.test(name)).flatMap((name) => readStat(Number(name)) ?? []);
}

/**
 * Live processes belonging to a terminal: every descendant of the shell plus
 * anything still in its session (node-pty makes the shell a session leader; jobs
 * get their own process groups, so the group alone is not enough). Zombies are
 * left out: they are already dead and only their parent can reap them.
 */
export function processTree(rootPid: number): number[] {
  const processes = allProcesses();
  const children = new Map<number, number[]>();
  for (const proc of processes) children.set(proc.ppid, [...(children.get(proc.ppid) ?? []), proc.pid]);
  const found = new Set<number>();
  const queue = [rootPid, ...processes.filter((proc) => proc.session === rootPid).map((proc) => proc.pid)];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    if (found.has(pid)) continue;
    found.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  const live = new Set(processes.filter((proc) => proc.state !== "Z").map((proc) => proc.pid));
  return [...found].filter((pid) => live.has(pid));
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // ESRCH: already gone, which is the goal.
  }
}

/**
 * Ends a terminal's processes the way closing a terminal window does: SIGHUP to the
 * shell (an interactive bash ignores SIGTERM but exits on hangup and passes it to its
 * jobs) and SIGTERM to everything in the tree, then SIGKILL to whatever is still
 * alive after the grace period.
 */
export async function killProcessTree(rootPid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  const initial = processTree(rootPid);
  signal(rootPid, "SIGHUP");
  for (const pid of initial) signal(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  let remaining = initial;
  while (remaining.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, KILL_POLL_MS));
    remaining = processTree(rootPid)
      .concat(initial)
      .filter((pid, index, all) => all.indexOf(pid) === index && isAlive(pid));
  }
  for (const pid of remaining) signal(pid, "SIGKILL");
}

function isAlive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== null && stat.state !== "Z";
}
