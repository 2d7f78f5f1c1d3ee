import * as z from "zod";
import { defineTool, type Tool } from "../define";
import type { ApprovalNeed } from "../types";
import { sharedTaskRegistry, type BackgroundTask, type TaskRegistry } from "./tasks";

/** Characters one task_output call returns at most (the newest). */
export const TASK_OUTPUT_MAX_CHARS = 30_000;
/** Longest task_output may wait for a task to finish. */
export const TASK_OUTPUT_MAX_WAIT_SECONDS = 120;

// Module-level so their JSON Schemas are converted once (define.ts caches them by schema).
const TaskOutputParameters = z.object({
  task_id: z.string().describe("The id returned by shell with background: true, e.g. task_1a2b3c4d."),
  wait_seconds: z
    .number()
    .min(0)
    .max(TASK_OUTPUT_MAX_WAIT_SECONDS)
    .optional()
    .describe("Wait up to this many seconds for the task to finish before reading (default 0: read at once)."),
});
const TaskStopParameters = z.object({
  task_id: z.string().describe("The id returned by shell with background: true."),
});

const ownTask = (what: string): ApprovalNeed => ({
  level: "none",
  subject: what,
  scope: what,
  description: what,
  risk: "none",
});

export function createTaskOutputTool(tasks: TaskRegistry = sharedTaskRegistry): Tool {
  return defineTool({
    name: "task_output",
    description:
      "Read the output a background shell task produced since the last read, and whether it is still running.",
    parameters: TaskOutputParameters,
    timeoutMs: (TASK_OUTPUT_MAX_WAIT_SECONDS + 10) * 1000,
    needsApproval: (args) => ownTask(`Read output of ${args.task_id}`),
    async execute(args, ctx) {
      const task = tasks.get(args.task_id, ctx.sessionId);
      if (!task) return { isError: true, output: unknownTask(args.task_id, tasks.list(ctx.sessionId)) };
      if (args.wait_seconds && task.status === "running") {
        await Promise.race([
          task.done,
          new Promise((resolve) => setTimeout(resolve, args.wait_seconds! * 1000)),
          new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true })),
        ]);
      }
      return readTask(task);
    },
  });
}

export function createTaskStopTool(tasks: TaskRegistry = sharedTaskRegistry): Tool {
  return defineTool({
    name: "task_stop",
    description: "Stop a background shell task and every process it started; returns its last output.",
    parameters: TaskStopParameters,
    needsApproval: (args) => ownTask(`Stop ${args.task_id}`),
    async execute(args, ctx) {
      const task = tasks.get(args.task_id, ctx.sessionId);
      if (!task) return { isError: true, output: unknownTask(args.task_id, tasks.list(ctx.sessionId)) };
      await tasks.stop(task);
      return readTask(task);
    },
  });
}

function readTask(task: BackgroundTask): string {
  const { text, cursor } = task.log.readFrom(task.cursor, TASK_OUTPUT_MAX_CHARS);
  task.cursor = cursor;
  return `${task.id}: ${describeStatus(task)} — ${task.command}\n${text === "" ? "(no new output)" : text.replace(/\n$/, "")}`;
}

function describeStatus(task: BackgroundTask): string {
  if (task.status === "running") return `running for ${Math.round((Date.now() - task.startedAt) / 1000)}s`;
  if (task.status === "stopped") return "stopped";
  return task.exit?.code !== null && task.exit?.code !== undefined
    ? `exited with code ${task.exit.code}`
    : `killed by ${task.exit?.signal ?? "a signal"}`;
}

function unknownTask(id: string, known: BackgroundTask[]): string {
  const list =
    known.length > 0
      ? ` Known tasks: ${known.map((t) => `${t.id} (${t.status})`).join(", ")}.`
      : " There are no background tasks in this session.";
  return `No background task ${id}.${list}`;
}
