import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { waitFor } from "../../support/wait";

/** Process groups the tests started; `killStarted` (after each test) ends whatever is left of them. */
const started: number[] = [];

export function killStarted(): void {
  for (const pgid of started.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone: the test killed it.
    }
  }
}

/** A bash script in its own session and process group (`detached` calls setsid), and the pids it prints. */
export async function startDetached(
  script: string,
  pidsPrinted: number,
): Promise<{ child: ChildProcess; pids: number[] }> {
  const child = spawn("/bin/bash", ["--norc", "--noprofile", "-c", script], {
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
  });
  started.push(child.pid as number);
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  await waitFor(
    () => out.split("\n").filter(Boolean).length >= pidsPrinted,
    5_000,
    () => `${pidsPrinted} pids (the script printed ${JSON.stringify(out)})`,
  );
  return { child, pids: out.split("\n").filter(Boolean).map(Number) };
}

/** Read straight from /proc, independently of the module under test. */
export function stat(pid: number): { state: string; ppid: number; pgrp: number; session: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, ppid, pgrp, session] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state, ppid: Number(ppid), pgrp: Number(pgrp), session: Number(session) };
  } catch {
    return undefined;
  }
}

/** Running: a zombie is not (only its parent, maybe init, can reap it). */
export function running(pid: number): boolean {
  const state = stat(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
}

export const exitOf = (child: ChildProcess) =>
  new Promise<NodeJS.Signals | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
    else child.once("exit", (_code, signal) => resolve(signal));
  });
