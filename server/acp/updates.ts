import type * as acp from "@agentclientprotocol/sdk";
import type { EventEnvelope } from "../protocol";
import { describeToolCall, diffContent, textContent } from "./describe";

/**
 * Translates a session's Worldline events into ACP `session/update`s. One per
 * session (it remembers each tool call's arguments to show its diff when done).
 * `replay` is for session/load: user messages are sent back too, and finished
 * tool calls are reported in their final state.
 */
export class UpdateTranslator {
  private readonly calls = new Map<string, { name: string; args: unknown }>();

  constructor(private readonly workspace: string) {}

  translate(event: EventEnvelope, options: { replay?: boolean } = {}): acp.SessionUpdate[] {
    switch (event.type) {
      case "message.user":
        return options.replay
          ? [{ sessionUpdate: "user_message_chunk", content: { type: "text", text: event.payload.text } }]
          : [];
      case "message.part.delta":
        return [
          {
            sessionUpdate: event.payload.part === "text" ? "agent_message_chunk" : "agent_thought_chunk",
            content: { type: "text", text: event.payload.delta },
            messageId: event.payload.messageId,
          },
        ];
      case "tool.call": {
        const { toolCallId, name, args } = event.payload;
        this.calls.set(toolCallId, { name, args });
        const shown = describeToolCall(name, args, this.workspace);
        return [
          {
            sessionUpdate: "tool_call",
            toolCallId,
            title: shown.title,
            kind: shown.kind,
            status: "pending",
            rawInput: args,
            locations: shown.locations,
            content: diffContent(name, args, this.workspace),
          },
        ];
      }
      case "tool.state":
        return [this.toolState(event.payload)];
      case "todo.updated":
        return [
          {
            sessionUpdate: "plan",
            entries: event.payload.items.map((item) => ({
              content: item.title,
              priority: "medium",
              status: item.status === "done" ? "completed" : item.status,
            })),
          },
        ];
      case "context.usage":
        return [{ sessionUpdate: "usage_update", used: event.payload.tokens, size: event.payload.window }];
      case "session.updated":
        return event.payload.title
          ? [{ sessionUpdate: "session_info_update", title: event.payload.title, updatedAt: event.createdAt }]
          : [];
      default:
        return [];
    }
  }

  private toolState(payload: Extract<EventEnvelope, { type: "tool.state" }>["payload"]): acp.SessionUpdate {
    const { toolCallId, state } = payload;
    if (state === "pending" || state === "waiting_approval")
      return { sessionUpdate: "tool_call_update", toolCallId, status: "pending" };
    if (state === "running") return { sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" };
    const call = this.calls.get(toolCallId);
    const content: acp.ToolCallContent[] = [];
    if (state === "completed" && call) content.push(...diffContent(call.name, call.args, this.workspace));
    // propose_plan: the plan itself, so an editor shows it; the client approves by switching the mode (setSessionMode).
    if (typeof payload.display?.plan === "string") content.push(textContent(payload.display.plan));
    if (payload.output) content.push(textContent(payload.output));
    const terminalId = payload.display?.acpTerminalId;
    if (typeof terminalId === "string") content.push({ type: "terminal", terminalId });
    return {
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: state === "completed" ? "completed" : "failed",
      content,
      rawOutput: { output: payload.output ?? "", isError: payload.isError ?? state === "error" },
    };
  }
}
