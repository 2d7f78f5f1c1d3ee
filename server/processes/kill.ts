import { groupAlive, groupExists, pidRunning, terminalMembers, treeMembers } from "./proc";

/**
 * Time between the polite signal (SIGTERM, SIGHUP) and SIGKILL, for shell commands and
 * terminals alike. Two seconds lets a polite process do what it does on SIGTERM (a dev
 * server closes its port, git removes its index.lock, a test runner writes its report);
 * longer only delays the result of a timed-out command and the close of a terminal, and
 * whatever ignores SIGTERM is killed after it anyway.
 */
const KILL_GRACE_MS = 2_000;
/** After SIGKILL the kernel needs a moment; past this we stop waiting (a process stuck in the kernel: state D). */
const KILL_WAIT_MS = 3_000;
/** Waiting for processes to go looks again after this long, then twice as long each time … */
const FIRST_CHECK_MS = 20;
/** … up to this: most processes exit within tens of ms, a slow one is not worth a /proc scan every 20 ms. */
const MAX_CHECK_MS = 200;

/**
 * What to kill:
 * - `terminal`: an interactive shell's processes the way closing a terminal window does:
 *   SIGHUP to the shell (an interactive bash ignores SIGTERM but exits on hangup and passes it
 *   to its jobs), SIGTERM to its descendants and its session (jobs have their own groups).
 * - `group`: a process group (a shell command started `detached`): SIGTERM to the group.
 * - `tree`: a program started `detached` and everything it started, whichever group or session
 *   its children moved to (an external agent and its commands): SIGTERM to each of them, and to
 *   the root's process group when it leads one (without /proc, as on macOS, the group is all
 *   that finds its children).
 */
type KillTarget =
  { kind: "terminal"; shellPid: number } | { kind: "group"; pgid: number } | { kind: "tree"; rootPid: number };

interface KillOptions {
  graceMs?: number;
  /** Resolves when the leader exits (a ChildProcess's 'exit'): looks again at once rather than at the next check. */
  leaderExited?: Promise<unknown>;
}

/**
 * Sends the polite signal, waits up to the grace period for everything to exit, then SIGKILLs
 * what is left and waits (bounded) for it to be gone. Zombies count as gone.
 */
export async function killProcesses(target: KillTarget, options: KillOptions = {}): Promise<void> {
  const wake = { pending: options.leaderExited };
  if (target.kind === "group") {
    signal(-target.pgid, "SIGTERM");
    if (await waitUntil(() => groupGone(target.pgid), options.graceMs ?? KILL_GRACE_MS, wake)) return;
    signal(-target.pgid, "SIGKILL");
    await waitUntil(() => groupGone(target.pgid), KILL_WAIT_MS, wake);
    return;
  }
  const members =
    target.kind === "terminal" ? () => terminalMembers(target.shellPid) : () => treeMembers(target.rootPid);
  const initial = await members();
  // A group whose id is the root's pid is the root's own (a pid is not reused while its group lives).
  const group = target.kind === "tree" && groupExists(target.rootPid) ? target.rootPid : undefined;
  if (target.kind === "terminal") signal(target.shellPid, "SIGHUP");
  for (const pid of initial) signal(pid, "SIGTERM");
  if (group !== undefined) signal(-group, "SIGTERM");
  // A member that left the tree and the session (a daemon) is still killed: the first list is kept.
  const survivors = async () => stillRunning([...initial, ...(await members())]);
  let left: number[] = [];
  const gone = async () =>
    (left = await survivors()).length === 0 && (group === undefined || !(await groupAlive(group)));
  if (await waitUntil(gone, options.graceMs ?? KILL_GRACE_MS, wake)) return;
  for (const pid of left) signal(pid, "SIGKILL");
  if (group !== undefined) signal(-group, "SIGKILL");
  await waitUntil(gone, KILL_WAIT_MS, wake);
}

/** SIGKILLs the processes now (no grace: what a dead bridge left) and waits, bounded, until they are gone. */
export async function killNow(pids: number[]): Promise<void> {
  for (const pid of pids) signal(pid, "SIGKILL");
  await waitUntil(async () => (await stillRunning(pids)).length === 0, KILL_WAIT_MS, {});
}

async function groupGone(pgid: number): Promise<boolean> {
  return !(await groupAlive(pgid));
}

/** The distinct pids that still run. */
async function stillRunning(pids: number[]): Promise<number[]> {
  const distinct = [...new Set(pids)];
  const running = await Promise.all(distinct.map(pidRunning));
  return distinct.filter((_pid, index) => running[index]);
}

function signal(target: number, name: NodeJS.Signals): void {
  try {
    process.kill(target, name);
  } catch {
    // ESRCH: already gone, which is the goal.
  }
}

/** Checks `done` with a doubling backoff until it holds (true) or the time is up (false). */
async function waitUntil(
  done: () => Promise<boolean>,
  timeoutMs: number,
  wake: { pending?: Promise<unknown> },
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let wait = FIRST_CHECK_MS;
  while (!(await done())) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return false;
    await sleep(Math.min(wait, remaining), wake);
    wait = Math.min(wait * 2, MAX_CHECK_MS);
  }
  return true;
}

/** Sleeps, or less if the leader exits meanwhile (once: after that it is a plain sleep). */
function sleep(ms: number, wake: { pending?: Promise<unknown> }): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void wake.pending?.then(() => {
      wake.pending = undefined;
      clearTimeout(timer);
      resolve();
    });
  });
}
