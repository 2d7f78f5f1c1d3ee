import { Context } from "./context";
import { runTurn } from "./loop";
import type { SubagentRunner } from "./tools";
import type { AgentTool } from "./tools-port";
import type { TurnEmitter } from "./turn-emitter";
import type { TurnRun } from "./turn-run";

/** What a subagent may use: it reads and researches, it never changes the workspace. */
export const SUBAGENT_TOOL_NAMES = ["read_file", "list_dir", "glob", "grep", "fetch_url"] as const;

/** A research task that needs more steps than this has lost its focus. */
export const SUBAGENT_MAX_STEPS = 30;

/** What a subagent's run takes over from its parent's. */
type ParentRun = Pick<
  TurnRun,
  | "sessionId"
  | "workspace"
  | "model"
  | "provider"
  | "gate"
  | "emit"
  | "retry"
  | "contextWindow"
  | "reasoning"
  | "decorateToolContext"
>;

/**
 * The `task` tool's engine: a nested loop with its own in-memory context, a
 * restricted toolset and a focused prompt. Its tool calls appear under the
 * parent call (`parentToolCallId`); its text streams as the parent's progress.
 */
export function createSubagentRunner(
  parent: ParentRun,
  available: readonly AgentTool[],
): { run: SubagentRunner; toolNames: string[] } {
  const tools = available.filter((tool) => (SUBAGENT_TOOL_NAMES as readonly string[]).includes(tool.name));
  const run: SubagentRunner = async ({ description, prompt, parentToolCallId, signal }) => {
    const context = Context.ephemeral(parent.sessionId);
    const result = await runTurn({
      ...parent,
      prompt,
      context,
      tools,
      signal,
      emit: nestedEmitter(parent.emit, parentToolCallId),
      maxSteps: SUBAGENT_MAX_STEPS,
      systemPrompt: subagentPrompt(parent.workspace, description, tools),
      compactionThreshold: undefined,
    });
    const messages = context.messages();
    const last = [...messages].reverse().find((message) => message.role === "assistant" && message.content);
    const answer = last && typeof last.content === "string" ? last.content : "";
    if (result.outcome === "completed")
      return { ok: true, answer: answer || "(The subagent finished without an answer.)" };
    const why = result.message ? `: ${result.message}` : "";
    return {
      ok: false,
      answer: `The subagent stopped (${result.outcome})${why}.${answer ? `\nIts last words:\n${answer}` : ""}`,
    };
  };
  return { run, toolNames: tools.map((tool) => tool.name) };
}

function subagentPrompt(workspace: string, description: string, tools: readonly AgentTool[]): string {
  return [
    "You are a subagent of Worldline, a coding agent. Another agent gave you one focused task; do it and report back.",
    `Your task: ${description}.`,
    `You work read-only in ${workspace} with these tools: ${tools.map((tool) => tool.name).join(", ") || "none"}.`,
    "Be efficient: search before you read, read only what you need. Your final message is the whole report the other agent gets:",
    "make it self-contained, with file paths and line numbers where they help, and nothing else.",
    `The current time is ${new Date().toISOString()}.`,
  ].join("\n");
}

function nestedEmitter(parent: TurnEmitter, parentToolCallId: string): TurnEmitter {
  return {
    turnId: parent.turnId,
    event(event) {
      switch (event.type) {
        case "tool.call":
          return parent.event({
            ...event,
            payload: { ...event.payload, parentToolCallId: event.payload.parentToolCallId ?? parentToolCallId },
          });
        case "tool.state":
        case "tool.progress":
        case "turn.retry":
          return parent.event(event);
        case "message.part.delta":
          if (event.payload.part === "text") {
            parent.event({
              type: "tool.progress",
              payload: { turnId: parent.turnId, toolCallId: parentToolCallId, text: event.payload.delta },
            });
          }
          return;
        case "turn.error":
          parent.event({
            type: "tool.progress",
            payload: {
              turnId: parent.turnId,
              toolCallId: parentToolCallId,
              text: `\n[error] ${event.payload.message}\n`,
            },
          });
          return;
        default:
          // Stages, usage and the subagent's own user message belong to its private loop.
          return;
      }
    },
  };
}
