import { describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript, type EventEnvelope } from "../../../server/protocol";

let seq = 0;
const ev = (type: string, payload: unknown) =>
  ({ seq: ++seq, type, payload, createdAt: new Date(0).toISOString() }) as EventEnvelope;

describe("transcript state for review and plan mode", () => {
  it("follows the session's mode, numbers turns by id and counts review actions", () => {
    const state = applyEvents(emptyTranscript(), [
      ev("session.updated", { title: "t", yolo: false }),
      ev("turn.started", { turnId: "turn_a", number: 1, prompt: "first" }),
      ev("session.updated", { mode: "plan" }),
      ev("turn.started", { turnId: "turn_b", number: 2, prompt: "second" }),
      ev("review.updated", { action: "accept", base: "cp_1", path: "a.txt", hunk: null }),
      ev("review.updated", { action: "revert", base: "cp_1", path: "a.txt", hunk: "h1", undoCheckpointId: "cp_9" }),
    ]);
    expect(state.mode).toBe("plan");
    expect(state.turnNumbers).toEqual({ turn_a: 1, turn_b: 2 });
    expect(state.reviewVersion).toBe(2);
    expect(applyEvents(state, [ev("session.updated", { mode: "default" })]).mode).toBe("default");
  });
});
