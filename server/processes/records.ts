import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { killNow } from "./kill";
import { listProcesses, pidExists, readStatSync } from "./proc";

/**
 * Process groups and terminal sessions the bridge started, recorded on disk under
 * WORLDLINE_HOME so that a bridge killed with SIGKILL (which runs no cleanup) has
 * its leftovers killed by the next bridge at start. A record names a process group
 * (shell commands, background tasks: `detached`, so pgid = pid) or a terminal
 * session (an interactive shell puts each job in its own group, but they all share
 * the shell's session id). The leader's start time guards against a reused pid:
 * only processes of that group/session started no earlier than the leader are killed.
 * Records are written synchronously, right after the spawn: a bridge killed a moment later
 * must not leave a process nobody recorded.
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
    const stat = readStatSync(id);
    if (!stat) return; // Already gone (or no procfs): nothing to clean up later.
    const record: ProcessRecord = { id, kind, label, startTicks: stat.startTicks, ownerPid: process.pid };
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(this.file(id), JSON.stringify(record));
    } catch (error) {
      // Best effort: a failure only means no cleanup after a crash.
      console.warn(`[worldline] could not record process ${id}:`, (error as Error).message);
    }
  }

  remove(id: number): void {
    rmSync(this.file(id), { force: true });
  }

  async list(): Promise<ProcessRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return []; // No records written yet.
    }
    const records: ProcessRecord[] = [];
    for (const name of names) {
      try {
        records.push(JSON.parse(await readFile(path.join(this.dir, name), "utf8")) as ProcessRecord);
      } catch {
        // a torn or corrupt record (a crash mid-write) names no process to stop
        await rm(path.join(this.dir, name), { force: true });
      }
    }
    return records;
  }

  /**
   * Kills what dead bridges left behind; returns the pids killed. Records of a live
   * bridge (`worldline acp` or `run` sharing the home) are kept.
   */
  async cleanupOrphans(): Promise<number[]> {
    const killed: number[] = [];
    const records = await this.list();
    if (records.length === 0) return killed;
    const stats = await listProcesses();
    for (const record of records) {
      if (record.ownerPid !== process.pid && pidExists(record.ownerPid)) continue;
      const members = stats.filter(
        (stat) =>
          (record.kind === "group" ? stat.pgrp === record.id : stat.session === record.id) &&
          stat.startTicks >= record.startTicks &&
          stat.pid !== process.pid,
      );
      killed.push(...members.map((member) => member.pid));
      this.remove(record.id);
    }
    // Gone, not only signalled, when the bridge says it is ready.
    await killNow(killed);
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
