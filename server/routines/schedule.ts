import { Cron } from "croner";
import { WorldlineError } from "../errors";

/** How often a bridge re-reads which routines have schedules (a routine made on another bridge). */
export const SCHEDULE_SYNC_MS = 5_000;

/**
 * A cron expression of five fields (minute first) or six (seconds first), or a nickname
 * (`@hourly`), in the bridge's time zone. Parsed by croner; refused here with a clear error.
 */
export function checkSchedule(expression: string): string {
  const trimmed = expression.trim();
  const fields = trimmed.split(/\s+/).length;
  if (!trimmed.startsWith("@") && fields !== 5 && fields !== 6) {
    throw new WorldlineError(
      "request:invalid",
      `A schedule is a cron expression of five fields (or six, seconds first); "${trimmed}" has ${fields}.`,
    );
  }
  let runs: Date[];
  try {
    runs = new Cron(trimmed, { paused: true }).nextRuns(3);
  } catch (error) {
    throw new WorldlineError(
      "request:invalid",
      `The schedule "${trimmed}" does not parse: ${(error as Error).message}`,
    );
  }
  if (runs.length === 0) throw new WorldlineError("request:invalid", `The schedule "${trimmed}" never fires.`);
  for (let i = 1; i < runs.length; i++) {
    if (runs[i].getTime() - runs[i - 1].getTime() < 1_000) {
      throw new WorldlineError("request:invalid", `The schedule "${trimmed}" fires more often than once a second.`);
    }
  }
  return trimmed;
}

/**
 * One croner job per scheduled routine on this bridge. Every bridge keeps the same jobs; which
 * of them fires a given run is decided in the store (a unique slot per routine and time), so a
 * bridge that starts or stops around the minute changes nothing.
 */
export class Scheduler {
  private readonly jobs = new Map<string, { expression: string; job: Cron }>();

  constructor(private readonly fire: (routineId: string, slot: string) => void) {}

  /** Makes the jobs match `routines` (id → expression). */
  sync(routines: readonly { id: string; schedule: string | null }[]): void {
    const wanted = new Map(routines.filter((r) => r.schedule).map((r) => [r.id, r.schedule as string]));
    for (const [id, { expression, job }] of this.jobs) {
      if (wanted.get(id) === expression) continue;
      job.stop();
      this.jobs.delete(id);
    }
    for (const [id, expression] of wanted) {
      if (this.jobs.has(id)) continue;
      const job = new Cron(expression, { catch: true }, (self) => {
        // croner wakes at or just after the scheduled second: that second names the slot on every bridge.
        const woke = (self.currentRun() ?? new Date()).getTime();
        const slot = new Date(Math.floor(woke / 1_000) * 1_000).toISOString();
        this.fire(id, slot);
      });
      this.jobs.set(id, { expression, job });
    }
  }

  stop(): void {
    for (const { job } of this.jobs.values()) job.stop();
    this.jobs.clear();
  }
}
