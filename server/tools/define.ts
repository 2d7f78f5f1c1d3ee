import * as z from "zod";
import { errorMessage, isWorldlineError } from "../errors";
import { redactForOutput, StreamRedactor } from "../secrets";
import type { ApprovalNeed, ToolContext, ToolDefinition, ToolResult } from "./types";

/** What the model reads at most from one tool call; more would crowd out the conversation. */
export const MAX_TOOL_OUTPUT_CHARS = 50_000;

/** A safety net for tools that do not bound their own time (shell and MCP do). */
export const DEFAULT_TOOL_TIMEOUT_MS = 5 * 60_000;

/** A tool as the agent loop sees it: schema for the model, approval need, and a run that never throws. */
export interface Tool {
  name: string;
  description: string;
  /** JSON Schema of the arguments, for the `parameters` of an OpenAI `tools` entry. */
  jsonSchema: Record<string, unknown>;
  /** What the approval gate needs. Invalid arguments need nothing: `run` will refuse them. */
  needsApproval(rawArgs: unknown, ctx: ToolContext): Promise<ApprovalNeed>;
  /** Validates, runs, caps the output; errors come back as `{isError: true}`. */
  run(rawArgs: unknown, ctx: ToolContext): Promise<ToolResult>;
}

export interface DefineToolOptions<P extends z.ZodType> extends ToolDefinition<P> {
  /** Overrides DEFAULT_TOOL_TIMEOUT_MS; `0` for none (the tool bounds itself). */
  timeoutMs?: number;
  /** Overrides MAX_TOOL_OUTPUT_CHARS. */
  maxOutputChars?: number;
  /**
   * The tool bounds its own time and answers an abort itself (shell: it kills
   * the process group, then reports the partial output), so no timeout or
   * abort race is put around it.
   */
  ownsCancellation?: boolean;
}

type ParseOutcome<A> = { ok: true; args: A } | { ok: false; error: string };

/** The shared core of zod tools and MCP tools (whose schemas arrive as JSON). */
export interface ToolCore<A> {
  name: string;
  description: string;
  jsonSchema: Record<string, unknown>;
  parse: (raw: unknown) => ParseOutcome<A>;
  needsApproval?: (args: A, ctx: ToolContext) => Promise<ApprovalNeed> | ApprovalNeed;
  execute: (args: A, ctx: ToolContext) => Promise<ToolResult | string>;
  timeoutMs?: number;
  maxOutputChars?: number;
  ownsCancellation?: boolean;
}

/**
 * Declares a tool. A tool without `needsApproval` asks before it runs: forgetting
 * to declare it must not make a tool that touches the world run unattended.
 */
export function defineTool<P extends z.ZodType>(definition: DefineToolOptions<P>): Tool {
  const { parameters } = definition;
  return buildTool<z.infer<P>>({
    name: definition.name,
    description: definition.description,
    jsonSchema: toJsonSchema(parameters),
    parse: (raw) => {
      const decoded = decodeArguments(raw);
      if (!decoded.ok) return decoded;
      const parsed = parameters.safeParse(decoded.args);
      if (parsed.success) return { ok: true, args: parsed.data as z.infer<P> };
      return { ok: false, error: formatIssues(parsed.error.issues) };
    },
    needsApproval: definition.needsApproval,
    execute: definition.execute,
    timeoutMs: definition.timeoutMs,
    maxOutputChars: definition.maxOutputChars,
    ownsCancellation: definition.ownsCancellation,
  });
}

/** Approval needs remembered per tool call until it runs; bounded for calls that never run (rejected). */
const MAX_REMEMBERED_NEEDS = 1_000;

const LEVEL_ORDER = { none: 0, ask: 1, always: 2 } as const;

export function buildTool<A>(core: ToolCore<A>): Tool {
  const timeoutMs = core.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const maxChars = core.maxOutputChars ?? MAX_TOOL_OUTPUT_CHARS;
  // What was shown to the gate for each call: a path swapped for a symlink between
  // approval and run must not turn an approved inside write into an outside one.
  const approvedNeeds = new Map<string, ApprovalNeed>();
  // Call ids repeat across turns with some providers; the key pins the call and its arguments.
  const keyOf = (args: A, ctx: ToolContext) =>
    JSON.stringify([ctx.sessionId, ctx.turnId ?? null, ctx.toolCallId, args]);
  const remember = (key: string, need: ApprovalNeed): ApprovalNeed => {
    approvedNeeds.set(key, need);
    if (approvedNeeds.size > MAX_REMEMBERED_NEEDS) approvedNeeds.delete(approvedNeeds.keys().next().value as string);
    return need;
  };
  const changedSinceApproval = async (args: A, ctx: ToolContext): Promise<string | undefined> => {
    const key = keyOf(args, ctx);
    const before = approvedNeeds.get(key);
    approvedNeeds.delete(key);
    if (!before || !core.needsApproval) return undefined;
    const now = await Promise.resolve(core.needsApproval(args, ctx)).catch(() => undefined); // reported below as "could not be checked again"
    if (!now) return "its target could not be checked again";
    if (now.subject !== before.subject || LEVEL_ORDER[now.level] > LEVEL_ORDER[before.level])
      return `it now means: ${now.description}`;
    return undefined;
  };

  return {
    name: core.name,
    description: core.description,
    jsonSchema: core.jsonSchema,

    async needsApproval(rawArgs, ctx) {
      const parsed = core.parse(rawArgs);
      if (!parsed.ok) {
        return {
          level: "none",
          subject: core.name,
          scope: core.name,
          description: `${core.name} with invalid arguments (will be refused)`,
          risk: "none",
        };
      }
      if (!core.needsApproval) {
        return { level: "ask", subject: core.name, scope: core.name, description: `Run ${core.name}`, risk: "medium" };
      }
      try {
        return remember(keyOf(parsed.args, ctx), await core.needsApproval(parsed.args, ctx));
      } catch (error) {
        // The gate must get an answer; when the need cannot be worked out, a human decides.
        const reason = errorMessage(error);
        return {
          level: "ask",
          subject: core.name,
          scope: core.name,
          description: `${core.name} (could not check what it touches: ${reason})`,
          risk: "medium",
        };
      }
    },

    async run(rawArgs, ctx) {
      const parsed = core.parse(rawArgs);
      if (!parsed.ok) {
        return {
          isError: true,
          output: `Invalid arguments for ${core.name}: ${parsed.error}\nFix the arguments and call ${core.name} again.`,
        };
      }
      if (ctx.signal.aborted) return { isError: true, output: "Cancelled before it started." };
      const changed = await changedSinceApproval(parsed.args, ctx);
      if (changed) {
        return {
          isError: true,
          output: `Refused: what ${core.name} touches changed after it was approved (${changed}). Check the path and call ${core.name} again.`,
        };
      }
      // Streamed progress reaches events and tabs before the result does: redacted by whole lines.
      const redactedProgress = withRedactedProgress(ctx);
      try {
        return await runParsed(parsed.args, redactedProgress.ctx);
      } finally {
        redactedProgress.flush();
      }
    },
  };

  async function runParsed(args: A, ctx: ToolContext): Promise<ToolResult> {
    if (core.ownsCancellation) {
      const result = await core.execute(args, ctx).then(normalizeResult, errorResult);
      return capResult(result, maxChars);
    }

    const controller = new AbortController();
    const onAbort = () => controller.abort(ctx.signal.reason);
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    const timer = timeoutMs > 0 ? setTimeout(() => controller.abort(new Error("timeout")), timeoutMs) : undefined;
    const stopped = new Promise<ToolResult>((resolve) => {
      controller.signal.addEventListener(
        "abort",
        () => {
          const timedOut = !ctx.signal.aborted;
          resolve({
            isError: true,
            output: timedOut ? `${core.name} timed out after ${Math.round(timeoutMs / 1000)}s.` : "Cancelled.",
          });
        },
        { once: true },
      );
    });

    try {
      const execution = core.execute(args, { ...ctx, signal: controller.signal }).then(normalizeResult, errorResult);
      const result = await Promise.race([execution, stopped]);
      return capResult(result, maxChars);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
  }
}

function withRedactedProgress(ctx: ToolContext): { ctx: ToolContext; flush(): void } {
  const streams = { output: new StreamRedactor(), status: new StreamRedactor() };
  const emit = (kind: "output" | "status", text: string) => {
    if (text) ctx.emit({ kind, text });
  };
  return {
    ctx: { ...ctx, emit: (progress) => emit(progress.kind, streams[progress.kind].push(progress.text)) },
    flush: () => {
      emit("output", streams.output.flush());
      emit("status", streams.status.flush());
    },
  };
}

/** Cuts text to `max` characters with a note the model can see. */
export function truncateOutput(text: string, max: number = MAX_TOOL_OUTPUT_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[output truncated: ${text.length - max} more characters]`;
}

/**
 * The boundary every tool result crosses before the model, the event log and the
 * UI see it: capped, and stripped of credential-shaped text and the bridge's own
 * secret env values (a `cat .env` or `env` must not ship keys to the provider).
 */
function capResult(result: ToolResult, max: number): ToolResult {
  const output = redactForOutput(result.output.length > max ? truncateOutput(result.output, max) : result.output);
  return {
    ...result,
    output,
    ...(result.display ? { display: redactDisplay(result.display) as Record<string, unknown> } : {}),
  };
}

function redactDisplay(value: unknown): unknown {
  if (typeof value === "string") return redactForOutput(value);
  if (Array.isArray(value)) return value.map(redactDisplay);
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactDisplay(inner)]));
  return value;
}

function normalizeResult(value: ToolResult | string): ToolResult {
  return typeof value === "string" ? { output: value, isError: false } : value;
}

function errorResult(error: unknown): ToolResult {
  if (isWorldlineError(error)) return { isError: true, output: `Error (${error.code}): ${error.message}` };
  return { isError: true, output: `Error: ${errorMessage(error)}` };
}

function decodeArguments(raw: unknown): ParseOutcome<unknown> {
  if (typeof raw !== "string") return { ok: true, args: raw ?? {} };
  if (raw.trim() === "") return { ok: true, args: {} };
  try {
    return { ok: true, args: JSON.parse(raw) };
  } catch (error) {
    return {
      ok: false,
      error: `the arguments are not valid JSON (${errorMessage(error)}). Send a single JSON object.`,
    };
  }
}

/** Also used by MCP tools, whose arguments must at least be a JSON object. */
export function decodeObjectArguments(raw: unknown): ParseOutcome<Record<string, unknown>> {
  const decoded = decodeArguments(raw);
  if (!decoded.ok) return decoded;
  const value = decoded.args;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: "the arguments must be a JSON object." };
  }
  return { ok: true, args: value as Record<string, unknown> };
}

function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.map(String).join(".") : "(arguments)";
    return `- ${where}: ${issue.message}`;
  });
  return `\n${lines.join("\n")}`;
}

/**
 * JSON Schemas by zod schema: tools are defined again for every turn (shell, grep, the agent's
 * own), and converting their schemas each time cost ~1.6 ms of the time to first token.
 */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

function toJsonSchema(parameters: z.ZodType): Record<string, unknown> {
  const cached = jsonSchemas.get(parameters);
  if (cached) return cached;
  // `io: "input"` keeps fields with defaults optional for the model.
  const schema = z.toJSONSchema(parameters, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete schema.$schema;
  jsonSchemas.set(parameters, schema);
  return schema;
}
