import fs from "node:fs";

/**
 * CPU time (user + system, all threads) a live process used so far, in ms, from /proc: unlike
 * wall time it barely moves when other jobs load the machine. Linux only (NaN elsewhere).
 */
export function processCpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S; // utime + stime
  } catch {
    return Number.NaN;
  }
}

/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS_PER_S = 100;
