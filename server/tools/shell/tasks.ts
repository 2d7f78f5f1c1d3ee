import { randomBytes } from "node:crypto";
import type { ProcessGroup, ExitInfo } from "./process-group";
import { RollingLog } from "./output";

/** Output a background task keeps (the newest part); older output is dropped with a note. */
export const TASK_LOG_MAX_CHARS = 1_000_000;

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
  group: ProcessGroup;
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

  add(task: Omit<BackgroundTask, "id">): BackgroundTask {
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

  async stopAll(): Promise<void> {
    await Promise.all([...this.tasks.values()].map((task) => this.stop(task)));
  }
}

/** The registry the built-in tools share unless a test passes its own. */
export const sharedTaskRegistry = new TaskRegistry();
