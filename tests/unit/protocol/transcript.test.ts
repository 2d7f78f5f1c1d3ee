import { describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript, type EventEnvelope } from "../../../server/protocol";

let seq = 0;
const ev = (type: string, payload: unknown) =>
  ({ seq: ++seq, type, payload, createdAt: new Date().toISOString() }) as EventEnvelope;

describe("transcript reducer", () => {
  it("folds a streamed turn into user and assistant items", () => {
    seq = 0;
    const state = applyEvents(emptyTranscript(), [
      ev("turn.started", { turnId: "t1", number: 1, prompt: "hi" }),
      ev("message.user", { turnId: "t1", messageId: "u1", text: "hi" }),
      ev("message.part.delta", { turnId: "t1", messageId: "a1", part: "reasoning", delta: "think" }),
      ev("message.part.delta", { turnId: "t1", messageId: "a1", part: "text", delta: "Hel" }),
      ev("message.part.delta", { turnId: "t1", messageId: "a1", part: "text", delta: "lo" }),
    ]);
    expect(state.running).toEqual({ turnId: "t1", stage: "planning" });
    expect(state.items).toMatchObject([
      { kind: "user", text: "hi" },
      { kind: "assistant", text: "Hello", reasoning: "think", done: false },
    ]);
    const done = applyEvents(state, [ev("turn.completed", { turnId: "t1", outcome: "completed" })]);
    expect(done.running).toBeNull();
    expect(done.items[1]).toMatchObject({ done: true });
  });

  it("ignores events it has already applied", () => {
    seq = 0;
    const events = [ev("notice", { level: "info", text: "a" }), ev("notice", { level: "info", text: "b" })];
    const once = applyEvents(emptyTranscript(), events);
    const twice = applyEvents(once, events);
    expect(twice.items).toHaveLength(2);
    expect(twice).toBe(once);
  });

  it("tracks tool states and pending approvals", () => {
    seq = 0;
    const state = applyEvents(emptyTranscript(), [
      ev("tool.call", { turnId: "t", messageId: "c1", toolCallId: "c1", name: "shell", args: { command: "ls" } }),
      ev("approval.requested", {
        turnId: "t",
        approvalId: "ap1",
        toolCallId: "c1",
        tool: "shell",
        args: { command: "ls" },
        description: "Run ls",
        riskLevel: "low",
        kind: "tool",
      }),
    ]);
    expect(state.items[0]).toMatchObject({ kind: "tool", state: "waiting_approval", approvalId: "ap1" });
    expect(Object.keys(state.approvals)).toEqual(["ap1"]);
    const decided = applyEvents(state, [
      ev("approval.decided", { approvalId: "ap1", status: "approved" }),
      ev("tool.state", { turnId: "t", toolCallId: "c1", state: "completed", output: "file.txt" }),
    ]);
    expect(decided.approvals).toEqual({});
    expect(decided.items[0]).toMatchObject({ state: "completed", output: "file.txt" });
  });
});
