import { randomUUID } from "node:crypto";
import type { TurnOutcome } from "../protocol";
import { errorMessage, WorldlineError } from "../errors";
import type { ToolContext, ToolResult } from "../tools/types";
import type { Context } from "./context";
import type { ChatProvider, ToolCallMessagePart, ToolSpec } from "./provider";
import type { RetryPolicy } from "./retry";
import { StatsCollector } from "./stats";
import { streamStep } from "./stream-step";
import type { AgentTool, ApprovalGate } from "./tools-port";
import type { TurnEmitter } from "./turn-emitter";

export interface TurnOptions {
  sessionId: string;
  workspace: string;
  model: string;
  prompt: string;
  reasoning?: "on" | "off";
  provider: ChatProvider;
  context: Context;
  systemPrompt: string;
  tools: AgentTool[];
  gate: ApprovalGate;
  emit: TurnEmitter;
  signal: AbortSignal;
  retry: RetryPolicy;
  maxSteps: number;
  contextWindow: number;
}

export interface TurnResult {
  outcome: TurnOutcome;
  message?: string;
  stats: ReturnType<StatsCollector["result"]>;
}

type StepOutcome = { kind: "continue" } | { kind: "stop"; outcome: TurnOutcome; message?: string };

/** A turn: append the user message, then steps until the model answers without tool calls. */
export async function runTurn(options: TurnOptions): Promise<TurnResult> {
  const { emit, context } = options;
  const stats = new StatsCollector();
  const messageId = `msg_${randomUUID()}`;
  emit.event({ type: "message.user", payload: { turnId: emit.turnId, messageId, text: options.prompt } });
  await context.append({ kind: "message", message: { role: "user", content: options.prompt } });

  try {
    for (let step = 1; step <= options.maxSteps; step++) {
      const outcome = await runStep(options, stats);
      if (outcome.kind === "stop") return { outcome: outcome.outcome, message: outcome.message, stats: stats.result() };
    }
    return { outcome: "max_steps", message: `Stopped after ${options.maxSteps} steps.`, stats: stats.result() };
  } catch (error) {
    if (options.signal.aborted) return { outcome: "cancelled", stats: stats.result() };
    const code = error instanceof WorldlineError ? error.code : "agent:internal";
    emit.event({ type: "turn.error", payload: { turnId: emit.turnId, code, message: errorMessage(error) } });
    return { outcome: "error", message: errorMessage(error), stats: stats.result() };
  }
}

async function runStep(options: TurnOptions, stats: StatsCollector): Promise<StepOutcome> {
  const { emit, context, signal } = options;
  emit.event({ type: "turn.stage", payload: { turnId: emit.turnId, stage: "planning" } });
  const running = new Map<string, Promise<ToolResult>>();
  let answering = false;

  const result = await streamStep(
    options.provider,
    {
      model: options.model,
      messages: [{ role: "system", content: options.systemPrompt }, ...context.messages()],
      tools: options.tools.map(toSpec),
      reasoning: options.reasoning,
    },
    signal,
    {
      turnId: emit.turnId,
      event(event) {
        if (!answering && event.type === "message.part.delta" && event.payload.part === "text") {
          answering = true;
          emit.event({ type: "turn.stage", payload: { turnId: emit.turnId, stage: "answering" } });
        }
        emit.event(event);
      },
    },
    options.retry,
    (call) => {
      // Start each tool as soon as its arguments are complete; duplicates in one step run once.
      if (!running.has(call.id)) running.set(call.id, startTool(options, call));
    },
  ).catch(async (error: unknown) => {
    await Promise.allSettled(running.values());
    throw error;
  });

  stats.addStep(result.outputTokens, result.seconds);
  if (result.usage) {
    await context.append({ kind: "usage", tokens: result.usage.inputTokens + result.usage.outputTokens });
    emit.event({
      type: "context.usage",
      payload: {
        tokens: result.usage.inputTokens + result.usage.outputTokens,
        window: options.contextWindow,
        inputTokens: result.usage.inputTokens,
        outputTokens: result.usage.outputTokens,
      },
    });
  }

  const toolResults = await Promise.all(
    result.toolCalls.map(async (call) => ({ call, result: await (running.get(call.id) ?? startTool(options, call)) })),
  );
  // Assistant message and all its results are appended together, in call order:
  // a cancel can never leave a tool call without a result in history.
  await context.append(
    { kind: "message", message: result.message },
    ...toolResults.map(({ call, result: toolResult }) => ({
      kind: "message" as const,
      message: { role: "tool" as const, tool_call_id: call.id, content: toolResult.output },
    })),
  );
  if (signal.aborted) return { kind: "stop", outcome: "cancelled" };
  if (result.toolCalls.length === 0) return { kind: "stop", outcome: "completed" };
  const rejected = toolResults.find(({ result: r }) => r.display?.rejected === true && !r.display?.feedback);
  if (rejected) return { kind: "stop", outcome: "rejected", message: "A tool call was rejected." };
  return { kind: "continue" };
}

async function startTool(options: TurnOptions, call: ToolCallMessagePart): Promise<ToolResult> {
  const { emit, signal } = options;
  const args = parseArgs(call.function.arguments);
  emit.event({
    type: "tool.call",
    payload: { turnId: emit.turnId, messageId: call.id, toolCallId: call.id, name: call.function.name, args },
  });
  const finish = (result: ToolResult): ToolResult => {
    emit.event({
      type: "tool.state",
      payload: {
        turnId: emit.turnId,
        toolCallId: call.id,
        state: result.isError ? "error" : "completed",
        output: result.output,
        isError: result.isError,
        display: result.display,
      },
    });
    return result;
  };
  const tool = options.tools.find((candidate) => candidate.name === call.function.name);
  if (!tool) {
    const names = options.tools.map((t) => t.name).join(", ") || "none";
    return finish({ output: `Unknown tool "${call.function.name}". Available tools: ${names}.`, isError: true });
  }
  if (signal.aborted) return finish(cancelledResult());
  const ctx: ToolContext = {
    cwd: options.workspace,
    signal,
    sessionId: options.sessionId,
    turnId: emit.turnId,
    toolCallId: call.id,
    askPassword: options.gate.askPassword
      ? (prompt) => options.gate.askPassword!({ sessionId: options.sessionId, turnId: emit.turnId, toolCallId: call.id, tool: tool.name, signal, prompt })
      : undefined,
    emit: (progress) => emit.event({ type: "tool.progress", payload: { turnId: emit.turnId, toolCallId: call.id, text: progress.text } }),
  };
  try {
    const need = await tool.needsApproval(call.function.arguments, ctx);
    const decision = await options.gate.check({
      sessionId: options.sessionId,
      turnId: emit.turnId,
      toolCallId: call.id,
      tool: tool.name,
      args,
      need,
      signal,
    });
    if (!decision.approved) {
      const output = decision.feedback
        ? `The user rejected this call with feedback: ${decision.feedback}`
        : "The user rejected this call. Do not retry it; wait for new instructions.";
      return finish({ output, isError: true, display: { rejected: true, feedback: decision.feedback } });
    }
    if (signal.aborted) return finish(cancelledResult());
    emit.event({ type: "tool.state", payload: { turnId: emit.turnId, toolCallId: call.id, state: "running" } });
    emit.event({ type: "turn.stage", payload: { turnId: emit.turnId, stage: "running_tool" } });
    const result = await tool.run(call.function.arguments, ctx);
    return finish(signal.aborted ? cancelledResult(result.output) : result);
  } catch (error) {
    if (signal.aborted) return finish(cancelledResult());
    return finish({ output: `The tool failed: ${errorMessage(error)}`, isError: true });
  }
}

function cancelledResult(partial?: string): ToolResult {
  return { output: partial ? `${partial}\n[cancelled by the user]` : "Cancelled by the user.", isError: true };
}

function parseArgs(raw: string): unknown {
  try {
    return raw ? JSON.parse(raw) : {};
  } catch {
    return raw;
  }
}

function toSpec(tool: AgentTool): ToolSpec {
  return { type: "function", function: { name: tool.name, description: tool.description, parameters: tool.jsonSchema } };
}
