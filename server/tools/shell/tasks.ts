import { randomBytes } from "node:crypto";
import { WorldlineError } from "../../errors";
import type { ExitInfo, HostProcess } from "../../host";
import { RollingLog } from "./output";

/** Output a background task keeps (the newest part); older output is dropped with a note. */
export const TASK_LOG_MAX_CHARS = 1_000_000;

/** Background tasks running at once in one session: a dev server, a watcher, a build and then some; more is a runaway loop. */
export const MAX_RUNNING_TASKS_PER_SESSION = 8;

/** Background tasks running at once on the bridge, all sessions together. */
export const MAX_RUNNING_TASKS = 32;

/** Finished tasks kept (with their output) per session for task_output; older ones are forgotten so a long session's memory stays bounded. */
export const MAX_FINISHED_TASKS_PER_SESSION = 16;

export type TaskStatus = "running" | "exited" | "stopped";

export interface BackgroundTask {
  id: string;
  sessionId: string;
  command: string;
  startedAt: number;
  status: TaskStatus;
  exit?: ExitInfo;
  log: RollingLog;
  /** Where the last task_output read stopped. */
  cursor: number;
  group: HostProcess;
  /** Resolves when the task has finished (exited or stopped). */
  done: Promise<void>;
}

/**
 * Background shell tasks, per bridge process, visible only to the session that
 * started them. The agent or transport calls `stopSession` when a session
 * closes and `stopAll` on shutdown so nothing outlives the bridge.
 */
export class TaskRegistry {
  private readonly tasks = new Map<string, BackgroundTask>();

  /** Throws `tools:busy` when the session or the bridge already runs as many tasks as allowed. */
  checkLimits(sessionId: string): void {
    const running = [...this.tasks.values()].filter((task) => task.status === "running");
    if (running.filter((task) => task.sessionId === sessionId).length >= MAX_RUNNING_TASKS_PER_SESSION) {
      throw new WorldlineError(
        "tools:busy",
        `This session already runs ${MAX_RUNNING_TASKS_PER_SESSION} background tasks; stop one with task_stop first.`,
      );
    }
    if (running.length >= MAX_RUNNING_TASKS) {
      throw new WorldlineError(
        "tools:busy",
        `The bridge already runs ${MAX_RUNNING_TASKS} background tasks; stop one with task_stop first.`,
      );
    }
  }

  add(task: Omit<BackgroundTask, "id">): BackgroundTask {
    this.forgetOldFinished(task.sessionId);
    const id = `task_${randomBytes(4).toString("hex")}`;
    const full = { ...task, id };
    this.tasks.set(id, full);
    return full;
  }

  get(id: string, sessionId: string): BackgroundTask | undefined {
    const task = this.tasks.get(id);
    return task && task.sessionId === sessionId ? task : undefined;
  }

  list(sessionId: string): BackgroundTask[] {
    return [...this.tasks.values()].filter((task) => task.sessionId === sessionId);
  }

  async stop(task: BackgroundTask): Promise<void> {
    if (task.status === "running") {
      task.status = "stopped";
      await task.group.stop();
    }
    await task.done;
  }

  async stopSession(sessionId: string): Promise<void> {
    await Promise.all(this.list(sessionId).map((task) => this.stop(task)));
  }

  private forgetOldFinished(sessionId: string): void {
    const finished = this.list(sessionId).filter((task) => task.status !== "running");
    for (const task of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_TASKS_PER_SESSION + 1)))
      this.tasks.delete(task.id);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.tasks.values()].map((task) => this.stop(task)));
  }
}

/** The registry the built-in tools share unless a test passes its own. */
export const sharedTaskRegistry = new TaskRegistry();
