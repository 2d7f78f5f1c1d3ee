import { afterEach, describe, expect, it, vi } from "vitest";
import { killProcesses } from "../../../server/processes";
import { exitOf, killStarted, running, startDetached } from "./support";

/**
 * Where there is no /proc (macOS), proc.ts sees nothing of a tree but its root. That listing is the
 * one thing replaced here; the processes, their group and the signals are real.
 */
vi.mock("../../../server/processes/proc", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../../server/processes/proc")>();
  return { ...real, treeMembers: async (root: number) => (real.pidExists(root) ? [root] : []) };
});

afterEach(killStarted);

// The test itself reads /proc to see what is left.
describe.runIf(process.platform === "linux")("a tree kill without /proc", () => {
  it("ends the root's children through its process group", async () => {
    const { child, pids } = await startDetached("sleep 30 & echo $!; sleep 30 & echo $!; wait", 2);
    const exited = exitOf(child);
    await killProcesses({ kind: "tree", rootPid: child.pid as number }, { graceMs: 5_000, leaderExited: exited });
    expect([child.pid as number, ...pids].filter(running)).toEqual([]);
  });

  it("SIGKILLs the group after the grace when its members ignore SIGTERM", async () => {
    const { child, pids } = await startDetached("trap '' TERM; sleep 30 & echo $!; wait", 1);
    const exited = exitOf(child);
    const graceMs = 400;
    const begun = Date.now();
    await killProcesses({ kind: "tree", rootPid: child.pid as number }, { graceMs, leaderExited: exited });
    expect(Date.now() - begun).toBeGreaterThanOrEqual(graceMs);
    expect([child.pid as number, ...pids].filter(running)).toEqual([]);
  });
});
