import { describe, expect, it } from "vitest";
import type { EventEnvelope } from "../../../server/protocol";
import { toPublicEvents } from "../../../server/transport/http/sse-map";

const ids = { taskId: "task1", sessionId: "s1" };
const env = (type: string, payload: unknown) => ({ seq: 1, createdAt: "", type, payload }) as EventEnvelope;

describe("public SSE mapping", () => {
  it("maps deltas to content_delta and reasoning_delta with task_id", () => {
    expect(
      toPublicEvents(env("message.part.delta", { turnId: "task1", messageId: "m", part: "text", delta: "hi" }), ids),
    ).toEqual([{ event: "content_delta", data: { task_id: "task1", delta: "hi" } }]);
    expect(
      toPublicEvents(
        env("message.part.delta", { turnId: "task1", messageId: "m", part: "reasoning", delta: "hm" }),
        ids,
      )[0].event,
    ).toBe("reasoning_delta");
  });

  it("ends with runtime_status done and done carrying generation_stats", () => {
    const stats = {
      output_tokens: 3,
      seconds: 1,
      min_tokens_per_second: 3,
      avg_tokens_per_second: 3,
      max_tokens_per_second: 3,
    };
    const events = toPublicEvents(env("turn.completed", { turnId: "task1", outcome: "completed", stats }), ids);
    expect(events.map((e) => e.event)).toEqual(["runtime_status", "done"]);
    expect(events[0].data).toMatchObject({ stage: "done", session_id: "s1", task_id: "task1" });
    expect(events[1].data).toMatchObject({ session_id: "s1", generation_stats: stats });
  });

  it("maps approval requests to tool_approval_requested with waiting_for_approval", () => {
    const events = toPublicEvents(
      env("approval.requested", {
        turnId: "task1",
        approvalId: "a1",
        toolCallId: "c1",
        tool: "shell",
        args: { command: "rm x" },
        description: "Run rm x",
        riskLevel: "high",
        kind: "tool",
      }),
      ids,
    );
    expect(events[1]).toEqual({
      event: "tool_approval_requested",
      data: expect.objectContaining({
        approval_id: "a1",
        tool: "shell",
        risk_level: "high",
        status: "waiting_for_approval",
      }),
    });
  });
});
