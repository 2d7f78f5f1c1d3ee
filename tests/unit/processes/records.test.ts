import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ProcessRecords, groupMembers } from "../../../server/processes";
import { waitFor } from "../../support/wait";

let dir: string;
const started: number[] = [];
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "worldline-records-"));
});
afterEach(async () => {
  for (const pgid of started.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone: cleanup killed it.
    }
  }
  await rm(dir, { recursive: true, force: true });
});

/** A detached group of three sleeping processes; resolves once all three are running. */
async function startGroup(): Promise<number> {
  const child = spawn("/bin/bash", ["--norc", "--noprofile", "-c", "sleep 30 & sleep 30 & wait"], {
    detached: true,
    stdio: "ignore",
  });
  const pgid = child.pid as number;
  started.push(pgid);
  await waitFor(async () => (await groupMembers(pgid)).length >= 3, 5_000, "the group to start");
  return pgid;
}

const recorded = async (id: number) =>
  JSON.parse(await readFile(path.join(dir, `${id}.json`), "utf8")) as { startTicks: number; ownerPid: number };

describe.runIf(process.platform === "linux")("ProcessRecords", () => {
  it("kills every member of a group whose bridge is gone, and forgets the record", async () => {
    const pgid = await startGroup();
    const records = new ProcessRecords(dir);
    records.add(pgid, "group", "shell");
    // The bridge that wrote it is dead: a pid that no longer exists.
    const dead = spawn("true");
    await new Promise((resolve) => dead.once("exit", resolve));
    await writeFile(path.join(dir, `${pgid}.json`), JSON.stringify({ ...(await recorded(pgid)), ownerPid: dead.pid }));

    const killed = await records.cleanupOrphans();

    expect(killed).toHaveLength(3);
    expect(killed).toContain(pgid);
    // Gone, not only signalled, once cleanup returns (the bridge reports ready right after it).
    expect(await groupMembers(pgid)).toEqual([]);
    expect(await readdir(dir)).toEqual([]);
  });

  it("leaves a live bridge's records and a reused pid's processes alone", async () => {
    const live = await startGroup();
    const reused = await startGroup();
    const records = new ProcessRecords(dir);
    records.add(live, "group", "shell");
    records.add(reused, "group", "shell");
    // Another bridge (here: this test's parent) still runs and owns it.
    await writeFile(
      path.join(dir, `${live}.json`),
      JSON.stringify({ ...(await recorded(live)), ownerPid: process.ppid }),
    );
    // Recorded for a leader that started later than the processes now in the group: not ours.
    const stale = await recorded(reused);
    await writeFile(
      path.join(dir, `${reused}.json`),
      JSON.stringify({ ...stale, startTicks: stale.startTicks + 100_000 }),
    );

    expect(await records.cleanupOrphans()).toEqual([]);
    expect(await groupMembers(live)).toHaveLength(3);
    expect(await groupMembers(reused)).toHaveLength(3);
    expect(await readdir(dir)).toEqual([`${live}.json`]);
  });

  it("has the record on disk when add returns, and none once remove returns", async () => {
    const pgid = await startGroup();
    const records = new ProcessRecords(dir);
    records.add(pgid, "group", "shell");
    expect(await readdir(dir)).toEqual([`${pgid}.json`]);
    records.remove(pgid);
    expect(await readdir(dir)).toEqual([]);
  });
});
