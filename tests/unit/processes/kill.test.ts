import { afterEach, describe, expect, it } from "vitest";
import { groupAlive, groupMembers, killProcesses, terminalMembers } from "../../../server/processes";
import { waitFor } from "../../support/wait";
import { exitOf, killStarted, running, startDetached, stat } from "./support";

// These tests read /proc to check what the module found and killed.
const linux = process.platform === "linux";

afterEach(killStarted);

describe.runIf(linux)("killProcesses", () => {
  it("kills a process group and every member of it", async () => {
    const { child, pids } = await startDetached("sleep 30 & echo $!; sleep 30 & echo $!; wait", 2);
    const members = [child.pid as number, ...pids];
    expect((await groupMembers(child.pid as number)).sort()).toEqual([...members].sort());
    expect(await groupAlive(child.pid as number)).toBe(true);

    const begun = Date.now();
    await killProcesses({ kind: "group", pgid: child.pid as number }, { graceMs: 5_000, leaderExited: exitOf(child) });

    // Polite processes end on SIGTERM: no waiting for the grace period.
    expect(Date.now() - begun).toBeLessThan(2_000);
    expect(members.filter(running)).toEqual([]);
    expect(await groupMembers(child.pid as number)).toEqual([]);
    expect(await groupAlive(child.pid as number)).toBe(false);
    expect(await exitOf(child)).toBe("SIGTERM");
  });

  it("SIGKILLs a group that ignores SIGTERM once the grace period is over", async () => {
    const { child, pids } = await startDetached("trap '' TERM; sleep 30 & echo $!; wait", 1);
    const graceMs = 400;
    const begun = Date.now();
    await killProcesses({ kind: "group", pgid: child.pid as number }, { graceMs, leaderExited: exitOf(child) });

    expect(Date.now() - begun).toBeGreaterThanOrEqual(graceMs);
    expect([child.pid as number, ...pids].filter(running)).toEqual([]);
    expect(await exitOf(child)).toBe("SIGKILL");
  });

  it("does not count a zombie as alive", async () => {
    // Job control gives the background `sleep 0` a group of its own; `exec sleep` never reaps it.
    const { child, pids } = await startDetached("set -m; sleep 0 & echo $!; exec sleep 30", 1);
    const zombie = pids[0];
    await waitFor(() => stat(zombie)?.state === "Z", 5_000, `pid ${zombie} to become a zombie`);
    expect(stat(zombie)?.pgrp).toBe(zombie);
    // The kernel still knows the group (signal 0 reaches it) …
    expect(() => process.kill(-zombie, 0)).not.toThrow();
    // … but nothing in it runs.
    expect(await groupAlive(zombie)).toBe(false);
    expect(await groupMembers(zombie)).toEqual([]);
    expect(await groupMembers(child.pid as number)).toEqual([child.pid]);

    const begun = Date.now();
    await killProcesses({ kind: "group", pgid: zombie }, { graceMs: 5_000 });
    // Nothing alive to wait for: well under the grace.
    expect(Date.now() - begun).toBeLessThan(1_000);
    expect(running(child.pid as number)).toBe(true);
  });

  it("kills a terminal's session member that left the tree and the shell's group", async () => {
    // Job control puts the subshell in a group of its own; its `sleep` outlives it and is reparented.
    const { child, pids } = await startDetached("set -m; (sleep 30 & echo $!); sleep 30 & echo $!; wait", 2);
    const [outsider, job] = pids;
    const shell = child.pid as number;
    expect(stat(outsider)).toMatchObject({ session: shell });
    expect(stat(outsider)?.ppid).not.toBe(shell);
    expect(stat(outsider)?.pgrp).not.toBe(shell);
    expect((await terminalMembers(shell)).sort()).toEqual([shell, outsider, job].sort());

    await killProcesses({ kind: "terminal", shellPid: shell }, { graceMs: 5_000, leaderExited: exitOf(child) });

    expect([shell, outsider, job].filter(running)).toEqual([]);
    // The shell got SIGHUP first, as when a terminal window closes.
    expect(await exitOf(child)).toBe("SIGHUP");
  });

  it("SIGKILLs a terminal's jobs that ignore SIGTERM and SIGHUP after the grace period", async () => {
    const { child, pids } = await startDetached(
      "set -m; bash -c 'trap \"\" TERM HUP; sleep 30 & echo $!; wait' & echo $!; wait",
      2,
    );
    const shell = child.pid as number;
    const graceMs = 400;
    const begun = Date.now();
    await killProcesses({ kind: "terminal", shellPid: shell }, { graceMs, leaderExited: exitOf(child) });

    expect(Date.now() - begun).toBeGreaterThanOrEqual(graceMs);
    expect([shell, ...pids].filter(running)).toEqual([]);
  });
});
