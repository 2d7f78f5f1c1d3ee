import { describe, expect, it } from "vitest";
import type { EventEnvelope } from "../../../server/protocol";
import { NO_ACTIVITY, nextActivity } from "../../../server/board/activity";

let seq = 0;
const event = (type: string, payload: unknown) =>
  ({ seq: ++seq, type, payload, createdAt: new Date().toISOString() }) as unknown as EventEnvelope;
const requested = event("approval.requested", {
  turnId: "t",
  approvalId: "a1",
  toolCallId: "c1",
  tool: "write_file",
  args: { path: "notes.txt" },
  description: "write notes.txt",
  riskLevel: "medium",
  kind: "tool",
});

describe("a card's last activity", () => {
  it("says what a call waits for, then what it did once allowed", () => {
    const waiting = nextActivity(NO_ACTIVITY, requested);
    expect(waiting.line).toBe("waits for approval: write_file");
    const allowed = nextActivity(waiting, event("approval.decided", { approvalId: "a1", status: "approved" }));
    expect(allowed).toEqual({ line: "edited notes.txt", asked: null });
  });

  it("says a rejected call did not run, and keeps the line through events that say nothing", () => {
    const rejected = nextActivity(
      nextActivity(NO_ACTIVITY, requested),
      event("approval.decided", { approvalId: "a1", status: "rejected" }),
    );
    expect(rejected.line).toBe("write_file not run (rejected)");
    expect(nextActivity(rejected, event("turn.stage", { turnId: "t", stage: "thinking" }))).toBe(rejected);
  });
});
