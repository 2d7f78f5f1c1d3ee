import path from "node:path";
import { errorMessage } from "../errors";
import type { ApprovalNeed, ToolContext, ToolResult } from "../tools/types";
import type { ToolCallMessagePart } from "./provider";
import type { Wait } from "./run-state";
import type { TurnRun } from "./turn-run";

/**
 * What running a tool reads of its turn (`checkpoints`: the step's checkpoint may still be
 * snapshotting, and a tool runs only once it is taken).
 */
type ToolRun = Pick<
  TurnRun,
  | "sessionId"
  | "workspace"
  | "tools"
  | "gate"
  | "emit"
  | "signal"
  | "decorateToolContext"
  | "checkpoints"
  | "hooks"
  | "runState"
>;

export interface CallResult {
  call: ToolCallMessagePart;
  result: ToolResult;
}

/**
 * The tool calls of one step: each starts as soon as its arguments are
 * complete, and a call identical to an earlier one of the same step (same
 * tool, same arguments) runs once and shares that result.
 */
export class StepTools {
  private readonly running = new Map<string, Promise<ToolResult>>();
  private readonly firstBySignature = new Map<string, ToolCallMessagePart>();
  private readonly ran: ToolCallMessagePart[] = [];

  /**
   * `announced`: calls whose `tool.call` event is already in the log (a step resumed after a
   * restart, server/agent/resume-step.ts): they run without announcing themselves again.
   */
  constructor(
    private readonly run: ToolRun,
    private readonly announced: ReadonlySet<string> = new Set(),
  ) {}

  /** A call whose result is already known (a resumed step's): it does not run. */
  settle(call: ToolCallMessagePart, result: ToolResult): void {
    this.running.set(call.id, Promise.resolve(result));
  }

  start(call: ToolCallMessagePart): void {
    if (this.running.has(call.id)) return;
    const signature = callSignature(call);
    const first = this.firstBySignature.get(signature);
    if (first) {
      this.running.set(call.id, this.duplicate(call, first));
      return;
    }
    this.firstBySignature.set(signature, call);
    this.ran.push(call);
    this.running.set(call.id, runTool(this.run, call, !this.announced.has(call.id)));
  }

  /** Results in call order, starting whatever has not started yet. */
  async results(calls: readonly ToolCallMessagePart[]): Promise<CallResult[]> {
    for (const call of calls) this.start(call);
    return Promise.all(calls.map(async (call) => ({ call, result: await this.running.get(call.id)! })));
  }

  /** Calls that actually ran (not the duplicates), for the history of a step that did not finish. */
  startedCalls(): ToolCallMessagePart[] {
    return this.ran.slice();
  }

  private async duplicate(call: ToolCallMessagePart, first: ToolCallMessagePart): Promise<ToolResult> {
    const { emit } = this.run;
    emit.event({
      type: "tool.call",
      payload: {
        turnId: emit.turnId,
        messageId: call.id,
        toolCallId: call.id,
        name: call.function.name,
        args: parseArgs(call.function.arguments),
      },
    });
    const original = await this.running.get(first.id)!;
    const result: ToolResult = {
      ...original,
      output: `(Same call as ${first.id} in this step; it ran once. Its result:)\n${original.output}`,
    };
    emitFinished(this.run, call, result);
    return result;
  }
}

/** Tool name plus arguments with keys sorted, so `{a,b}` and `{b,a}` count as the same call. */
export function callSignature(call: ToolCallMessagePart): string {
  const raw = call.function.arguments;
  let args = raw;
  try {
    args = JSON.stringify(sortKeys(JSON.parse(raw || "{}")));
  } catch {
    // Unparseable arguments compare as raw text; the tool will refuse them anyway.
  }
  return `${call.function.name}\u0000${args}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

async function runTool(run: ToolRun, call: ToolCallMessagePart, announce: boolean): Promise<ToolResult> {
  const { emit, signal, runState } = run;
  const args = parseArgs(call.function.arguments);
  if (announce) {
    emit.event({
      type: "tool.call",
      payload: { turnId: emit.turnId, messageId: call.id, toolCallId: call.id, name: call.function.name, args },
    });
  }
  const finish = (result: ToolResult): ToolResult => {
    emitFinished(run, call, result);
    runState?.finished(call.id, result);
    return result;
  };
  // The request this call waits on, if a person is asked: kept in the turn's run state meanwhile.
  let asked: string | undefined;
  const onAsked = (wait: (approvalId: string) => Wait) =>
    runState
      ? (approvalId: string) => {
          asked = approvalId;
          return runState.asked(wait(approvalId));
        }
      : undefined;
  const answered = () => {
    if (asked) runState?.answered(asked);
    asked = undefined;
  };
  const tool = run.tools.find((candidate) => candidate.name === call.function.name);
  if (!tool) {
    const names = run.tools.map((t) => t.name).join(", ") || "none";
    return finish({ output: `Unknown tool "${call.function.name}". Available tools: ${names}.`, isError: true });
  }
  if (signal.aborted) return finish(cancelledResult());
  const base: ToolContext = {
    cwd: run.workspace,
    signal,
    sessionId: run.sessionId,
    turnId: emit.turnId,
    toolCallId: call.id,
    // sudo asks the human for a password through the approval queue (never stored or logged).
    askPassword: run.gate.askPassword
      ? (prompt) =>
          run.gate.askPassword!({
            sessionId: run.sessionId,
            turnId: emit.turnId,
            toolCallId: call.id,
            tool: tool.name,
            signal,
            prompt,
            onAsked: onAsked((approvalId) => ({ kind: "password", approvalId, callId: call.id })),
          }).finally(answered)
      : undefined,
    emit: (progress) =>
      emit.event({ type: "tool.progress", payload: { turnId: emit.turnId, toolCallId: call.id, text: progress.text } }),
  };
  const ctx = run.decorateToolContext ? run.decorateToolContext(base) : base;
  try {
    const need = await tool.needsApproval(call.function.arguments, ctx);
    const hookInput = { tool_name: tool.name, tool_input: hookToolInput(args, run.workspace), toolCallId: call.id };
    const pre = await run.hooks?.run("PreToolUse", hookInput);
    if (signal.aborted) return finish(cancelledResult());
    if (pre?.block !== undefined) {
      await auditRejected(ctx, need, "PreToolUse hook");
      const output = `A PreToolUse hook blocked this call: ${pre.block}`;
      return finish({ output, isError: true, display: { blockedByHook: pre.block } });
    }
    const decision = await run.gate.check({
      sessionId: run.sessionId,
      turnId: emit.turnId,
      toolCallId: call.id,
      tool: tool.name,
      args,
      need,
      signal,
      ...(pre?.approve ? { hookApproved: pre.approve } : {}),
      onAsked: onAsked((approvalId) => ({ kind: "tool", approvalId, callId: call.id, scope: need.scope })),
    });
    answered();
    if (signal.aborted) return finish(cancelledResult());
    if (!decision.approved) {
      await auditRejected(ctx, need, decision.decidedBy);
      const output = decision.feedback
        ? `The user rejected this call with feedback: ${decision.feedback}`
        : "The user rejected this call. Do not retry it; wait for new instructions.";
      return finish({ output, isError: true, display: { rejected: true, feedback: decision.feedback } });
    }
    if (decision.decidedBy) ctx.approvedBy = decision.decidedBy;
    await run.checkpoints?.captured?.(run.sessionId);
    if (signal.aborted) return finish(cancelledResult());
    emit.event({ type: "tool.state", payload: { turnId: emit.turnId, toolCallId: call.id, state: "running" } });
    emit.event({ type: "turn.stage", payload: { turnId: emit.turnId, stage: "running_tool" } });
    const result = await tool.run(call.function.arguments, ctx);
    if (signal.aborted) return finish(cancelledResult(result.output));
    const post = await run.hooks?.run("PostToolUse", {
      ...hookInput,
      tool_response: { output: result.output, is_error: result.isError },
    });
    if (!post?.feedback.length) return finish(result);
    return finish({ ...result, output: `${result.output}\n\nPostToolUse hook says:\n${post.feedback.join("\n")}` });
  } catch (error) {
    if (signal.aborted) return finish(cancelledResult());
    return finish({ output: `The tool failed: ${errorMessage(error)}`, isError: true });
  }
}

/** A rejected shell call is audited here, with the rule or person that rejected it: the tool never runs. */
async function auditRejected(ctx: ToolContext, need: ApprovalNeed, decidedBy: string | undefined): Promise<void> {
  if (!need.auditedCommand || !ctx.audit) return;
  try {
    await ctx.audit({
      command: need.auditedCommand,
      cwd: ctx.cwd,
      riskLevel: need.risk,
      actionType: need.actionType ?? "unknown",
      approved: false,
      decidedBy,
      exitCode: null,
    });
  } catch (error) {
    // The rejection stands either way; a failing audit store is the bridge's to report.
    console.error(`audit record failed: ${errorMessage(error)}`);
  }
}

function emitFinished(run: ToolRun, call: ToolCallMessagePart, result: ToolResult): void {
  run.emit.event({
    type: "tool.state",
    payload: {
      turnId: run.emit.turnId,
      toolCallId: call.id,
      state: result.isError ? "error" : "completed",
      output: result.output,
      isError: result.isError,
      display: result.display,
    },
  });
}

const CANCELLED_OUTPUT = "Cancelled by the user.";

function cancelledResult(partial?: string): ToolResult {
  return { output: partial ? `${partial}\n[cancelled by the user]` : CANCELLED_OUTPUT, isError: true };
}

/**
 * The call's arguments as a hook reads them: ours, plus Claude Code's `file_path` (absolute) for
 * the file tools, so a team's `jq -r .tool_input.file_path` finds the file.
 */
function hookToolInput(args: unknown, workspace: string): unknown {
  if (!args || typeof args !== "object" || Array.isArray(args)) return args;
  const file = (args as { path?: unknown }).path;
  return typeof file === "string" ? { ...args, file_path: path.resolve(workspace, file) } : args;
}

function parseArgs(raw: string): unknown {
  try {
    return raw ? JSON.parse(raw) : {};
  } catch {
    // not JSON: shown raw; the tool refuses it with a message for the model
    return raw;
  }
}
