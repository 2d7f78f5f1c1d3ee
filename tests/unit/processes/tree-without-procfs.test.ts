import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { killProcesses } from "../../../server/processes";
import { waitFor } from "../../support/wait";

/**
 * Where there is no /proc (macOS), proc.ts sees nothing of a tree but its root. That listing is the
 * one thing replaced here; the processes, their group and the signals are real.
 */
vi.mock("../../../server/processes/proc", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../../server/processes/proc")>();
  return { ...real, treeMembers: async (root: number) => (real.pidExists(root) ? [root] : []) };
});

const started: number[] = [];
afterEach(() => {
  for (const pgid of started.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone: the test killed it.
    }
  }
});

/** A bash script in its own process group (as external agents are started), and the pids it prints. */
async function startDetached(script: string, pidsPrinted: number): Promise<{ child: ChildProcess; pids: number[] }> {
  const child = spawn("/bin/bash", ["--norc", "--noprofile", "-c", script], {
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
  });
  started.push(child.pid as number);
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  await waitFor(() => out.split("\n").filter(Boolean).length >= pidsPrinted, 5_000, "the script's pids");
  return { child, pids: out.split("\n").filter(Boolean).map(Number) };
}

/** Running, read straight from /proc (a zombie is not: only its parent, maybe init, can reap it). */
function running(pid: number): boolean {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]$/.test(text.slice(text.lastIndexOf(")") + 2).split(" ")[0]);
  } catch {
    return false;
  }
}

// The test itself reads /proc to see what is left.
describe.runIf(process.platform === "linux")("a tree kill without /proc", () => {
  it("ends the root's children through its process group", async () => {
    const { child, pids } = await startDetached("sleep 30 & echo $!; sleep 30 & echo $!; wait", 2);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    await killProcesses({ kind: "tree", rootPid: child.pid as number }, { graceMs: 5_000, leaderExited: exited });
    expect([child.pid as number, ...pids].filter(running)).toEqual([]);
  });

  it("SIGKILLs the group after the grace when its members ignore SIGTERM", async () => {
    const { child, pids } = await startDetached("trap '' TERM; sleep 30 & echo $!; wait", 1);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const graceMs = 400;
    const begun = Date.now();
    await killProcesses({ kind: "tree", rootPid: child.pid as number }, { graceMs, leaderExited: exited });
    expect(Date.now() - begun).toBeGreaterThanOrEqual(graceMs);
    expect([child.pid as number, ...pids].filter(running)).toEqual([]);
  });
});
