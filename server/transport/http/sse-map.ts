import type { EventEnvelope } from "../../protocol";

export interface PublicSseEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * The one place internal session events become the public SSE vocabulary of
 * the public API (snake_case names, `task_id` on every object; server/transport/http/openapi-docs.ts).
 */
export function toPublicEvents(envelope: EventEnvelope, ids: { taskId: string; sessionId: string }): PublicSseEvent[] {
  const base = { task_id: ids.taskId };
  const status = (stage: string): PublicSseEvent => ({
    event: "runtime_status",
    data: { ...base, session_id: ids.sessionId, conversation_id: ids.sessionId, stage },
  });
  switch (envelope.type) {
    case "turn.stage":
      return [status(envelope.payload.stage)];
    case "message.part.delta":
      return [
        {
          event: envelope.payload.part === "text" ? "content_delta" : "reasoning_delta",
          data: { ...base, delta: envelope.payload.delta },
        },
      ];
    case "tool.call":
      return [
        {
          event: "tool_call_started",
          data: {
            ...base,
            tool_call_id: envelope.payload.toolCallId,
            tool: envelope.payload.name,
            args: envelope.payload.args,
          },
        },
      ];
    case "tool.state":
      if (envelope.payload.state !== "completed" && envelope.payload.state !== "error") return [];
      return [
        {
          event: "tool_call_finished",
          data: {
            ...base,
            tool_call_id: envelope.payload.toolCallId,
            output: envelope.payload.output ?? "",
            is_error: envelope.payload.isError ?? envelope.payload.state === "error",
          },
        },
      ];
    case "approval.requested": {
      const password = envelope.payload.kind === "password";
      return [
        status(password ? "waiting_for_password" : "waiting_for_approval"),
        {
          event: password ? "tool_password_requested" : "tool_approval_requested",
          data: {
            ...base,
            approval_id: envelope.payload.approvalId,
            tool_call_id: envelope.payload.toolCallId,
            tool: envelope.payload.tool,
            args: envelope.payload.args,
            description: envelope.payload.description,
            risk_level: envelope.payload.riskLevel,
            status: password ? "waiting_for_password" : "waiting_for_approval",
          },
        },
      ];
    }
    case "memory.policy_decision": {
      const { decision, via, reason, text } = envelope.payload;
      return [{ event: "memory_policy_decision", data: { ...base, decision, via, reason, ...(text ? { text } : {}) } }];
    }
    case "memory.stored": {
      const { memoryId, text, type, scope, importance, source } = envelope.payload;
      return [
        { event: "memory_stored", data: { ...base, memory_id: memoryId, text, type, scope, importance, source } },
      ];
    }
    case "reflection.completed": {
      const { outcome, lesson, memoryId, message } = envelope.payload;
      return [
        {
          event: "reflection_completed",
          data: {
            ...base,
            outcome,
            lesson: lesson ?? null,
            memory_id: memoryId ?? null,
            ...(message ? { message } : {}),
          },
        },
      ];
    }
    case "turn.retry":
      return [
        {
          event: "retry",
          data: {
            ...base,
            attempt: envelope.payload.attempt,
            delay_ms: envelope.payload.delayMs,
            message: envelope.payload.message,
          },
        },
      ];
    case "turn.error":
      return [{ event: "error", data: { ...base, code: envelope.payload.code, message: envelope.payload.message } }];
    case "turn.completed":
      return [
        status("done"),
        {
          event: "done",
          data: {
            ...base,
            session_id: ids.sessionId,
            outcome: envelope.payload.outcome,
            stop_reason: envelope.payload.stopReason ?? null,
            // The public API: the usage fields are always there, null when unknown (older turns' stats lack them).
            generation_stats: envelope.payload.stats
              ? {
                  input_tokens: null,
                  cached_input_tokens: null,
                  cost_usd: null,
                  reasoning_tokens: null,
                  cache_write_tokens: null,
                  ...envelope.payload.stats,
                }
              : null,
          },
        },
      ];
    default:
      return [];
  }
}
