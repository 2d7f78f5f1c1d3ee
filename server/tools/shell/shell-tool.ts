import * as z from "zod";
import { errorMessage } from "../../errors";
import { heldSecretValues, redactKnownValues, redactSecrets, secretEnvValues } from "../../secrets/redact";
import { defineTool, type Tool } from "../define";
import { hostOf } from "../host-of";
import type { ToolContext } from "../types";
import { shellApproval, rewriteSudo } from "./approval";
import { auditCommand } from "./audit";
import { classifyCommand } from "./classify";
import { HeadTailBuffer, RollingLog } from "./output";
import { TASK_LOG_MAX_CHARS, sharedTaskRegistry, type BackgroundTask, type TaskRegistry } from "./tasks";

/** Default time a foreground command may run; builds and test suites fit, a hung server does not. */
export const DEFAULT_SHELL_TIMEOUT_MS = 120_000;
/** Longest a foreground command may be given; longer work belongs in background mode. */
export const MAX_SHELL_TIMEOUT_MS = 600_000;
/** Output kept from one foreground command (beginning and end). */
export const SHELL_OUTPUT_MAX_CHARS = 30_000;

export interface ShellToolOptions {
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  /** Extra environment for commands (on top of the bridge's). */
  env?: Record<string, string | undefined>;
  tasks?: TaskRegistry;
  /** Time between SIGTERM and SIGKILL when a command is stopped (default: the processes module's). */
  killGraceMs?: number;
}

// Commands run without a terminal: pagers and credential prompts would hang them.
export const NON_INTERACTIVE_ENV = {
  PAGER: "cat",
  GIT_PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  DEBIAN_FRONTEND: "noninteractive",
};

export function createShellTool(options: ShellToolOptions = {}): Tool {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS;
  const maxTimeoutMs = options.maxTimeoutMs ?? MAX_SHELL_TIMEOUT_MS;
  const tasks = options.tasks ?? sharedTaskRegistry;

  const ShellParameters = z.object({
    command: z
      .string()
      .min(1)
      .describe(
        "The bash command line to run in the workspace folder. Prefer the dedicated tools for reading, searching and editing files.",
      ),
    timeout_seconds: z
      .number()
      .positive()
      .max(maxTimeoutMs / 1000)
      .optional()
      .describe(
        `Kill the command (and everything it started) after this many seconds. Default ${defaultTimeoutMs / 1000}, maximum ${maxTimeoutMs / 1000}.`,
      ),
    background: z
      .boolean()
      .optional()
      .describe(
        "Start the command in the background (servers, watchers, long builds) and return a task id at once; read its output with task_output and end it with task_stop.",
      ),
  });

  return defineTool({
    name: "shell",
    description:
      "Run a bash command in the workspace folder. stdout and stderr are merged; long output keeps its beginning and end. The exit code is reported. Commands get no input (stdin is closed) and no terminal. Background processes started with `&` are stopped when the command ends; use background: true for long-running processes.",
    parameters: ShellParameters,
    ownsCancellation: true,
    needsApproval: (args, ctx) => shellApproval(args.command, ctx.cwd, hostOf(ctx)),
    async execute(args, ctx) {
      const classification = await classifyCommand(args.command);
      let password: string | undefined;
      if (classification.usesSudo) {
        if (!ctx.askPassword)
          return {
            isError: true,
            output:
              "This command needs sudo, but there is no one to ask for the password here. Run it without sudo or ask the user to run it.",
          };
        const answer = await ctx.askPassword(`Password for sudo, to run: ${redactSecrets(args.command)}`);
        if (!answer)
          return { isError: true, output: "The user did not give the sudo password, so the command was not run." };
        password = answer;
      }
      const secrets = [...secretEnvValues(process.env), ...heldSecretValues(), ...secretEnvValues(options.env ?? {})];
      const run: RunSpec = {
        command: password === undefined ? args.command : await rewriteSudo(args.command),
        stdin: password === undefined ? undefined : `${password}\n`,
        // The host adds its own environment: the bridge's never travels to a runner.
        env: { ...options.env, ...NON_INTERACTIVE_ENV },
        // The password is removed whatever its length; env values only when long enough to be unambiguous.
        scrub: (text) => {
          const scrubbed = redactKnownValues(text, secrets);
          return password ? scrubbed.split(password).join("[REDACTED]") : scrubbed;
        },
        audit: (exitCode, durationMs) => auditCommand(ctx, args.command, classification, exitCode, durationMs),
      };
      if (args.background) return startBackground(run, ctx, tasks);
      const timeoutMs = Math.min((args.timeout_seconds ?? defaultTimeoutMs / 1000) * 1000, maxTimeoutMs);
      return runForeground(run, ctx, timeoutMs, options.killGraceMs);
    },
  });
}

interface RunSpec {
  command: string;
  stdin?: string;
  env: Record<string, string | undefined>;
  scrub: (text: string) => string;
  audit: (exitCode: number | null, durationMs: number) => Promise<void>;
}

async function runForeground(run: RunSpec, ctx: ToolContext, timeoutMs: number, graceMs: number | undefined) {
  const started = Date.now();
  const output = new HeadTailBuffer(SHELL_OUTPUT_MAX_CHARS);
  const group = await hostOf(ctx).exec({
    command: run.command,
    cwd: ctx.cwd,
    env: run.env,
    stdin: run.stdin,
    onOutput: (chunk) => {
      output.append(chunk);
      ctx.emit({ kind: "output", text: run.scrub(chunk) });
    },
  });
  let ending: "timeout" | "cancel" | undefined;
  const end = (why: "timeout" | "cancel") => {
    ending ??= why;
    void group.stop(graceMs);
  };
  const timer = setTimeout(() => end("timeout"), timeoutMs);
  const onAbort = () => end("cancel");
  if (ctx.signal.aborted) onAbort();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const { exit, leftoversStopped } = await group.finish();
    const durationMs = Date.now() - started;
    await run.audit(exit.code, durationMs);
    const notes: string[] = [];
    if (ending === "timeout")
      notes.push(`[timed out after ${formatSeconds(timeoutMs)}; the command and every process it started were killed]`);
    else if (ending === "cancel") notes.push("[cancelled; the command and every process it started were killed]");
    else if (leftoversStopped)
      notes.push(
        "[processes the command left running in the background were stopped; use background: true for long-running processes]",
      );
    notes.push(exit.code !== null ? `[exit code: ${exit.code}]` : `[killed by ${exit.signal ?? "a signal"}]`);
    const text = run.scrub(output.toString());
    return {
      isError: ending !== undefined || exit.code !== 0,
      output: `${text === "" ? "(no output)" : text.replace(/\n$/, "")}\n${notes.join("\n")}`,
    };
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onAbort);
  }
}

async function startBackground(run: RunSpec, ctx: ToolContext, tasks: TaskRegistry) {
  tasks.checkLimits(ctx.sessionId);
  const started = Date.now();
  const log = new RollingLog(TASK_LOG_MAX_CHARS);
  const group = await hostOf(ctx).exec({
    command: run.command,
    cwd: ctx.cwd,
    env: run.env,
    stdin: run.stdin,
    onOutput: (chunk) => log.append(run.scrub(chunk)),
  });
  const task: BackgroundTask = tasks.add({
    sessionId: ctx.sessionId,
    command: redactSecrets(run.command),
    startedAt: started,
    status: "running",
    log,
    cursor: 0,
    group,
    done: Promise.resolve(),
  });
  task.done = group.finish().then(
    async ({ exit }) => {
      if (task.status === "running") task.status = "exited";
      task.exit = exit;
      await run.audit(exit.code, Date.now() - started);
    },
    (error: unknown) => {
      // The host went away (a runner that did not come back): what became of the command is unknown.
      if (task.status === "running") task.status = "exited";
      task.exit = { code: null, signal: null };
      log.append(`\n[${errorMessage(error)}]\n`);
    },
  );
  return `Started background task ${task.id} (process group ${group.pid}). Read its output with task_output and stop it with task_stop.`;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`;
}
