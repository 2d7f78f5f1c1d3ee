import { describe, expect, it } from "vitest";
import { noticeOf, routineNotice } from "../../../server/notify/notices";
import { PushSubscriptionBody, type EventEnvelope } from "../../../server/protocol";

const requested = (payload: Record<string, unknown>) =>
  ({
    seq: 1,
    type: "approval.requested",
    created_at: new Date().toISOString(),
    payload: {
      turnId: "t1",
      approvalId: "a1",
      toolCallId: "c1",
      tool: "shell",
      args: {},
      description: "run",
      riskLevel: "medium",
      kind: "tool",
      ...payload,
    },
  }) as unknown as EventEnvelope;

describe("notices", () => {
  it("names what waits: an approval, a password, a budget", () => {
    expect(noticeOf(requested({}))).toMatchObject({ key: "approval:a1", type: "approval.requested", tool: "shell" });
    expect(noticeOf(requested({ kind: "password" }))?.type).toBe("password.requested");
    expect(noticeOf(requested({ tool: "budget", description: "spent 1.02 of 1.00 USD" }))).toMatchObject({
      type: "budget.requested",
      summary: "The budget is spent: spent 1.02 of 1.00 USD",
    });
  });

  it("keeps secrets and long text out of the summary", () => {
    const secret = "sk-" + "a".repeat(40);
    const notice = noticeOf(
      requested({ description: `curl -H "Authorization: Bearer ${secret}" ${"x".repeat(400)}` }),
    )!;
    expect(notice.summary).not.toContain(secret);
    expect(notice.summary.length).toBeLessThanOrEqual(160);
  });

  it("tells a failed turn from a finished one, and a routine run's end", () => {
    const ended = (outcome: string, message?: string) =>
      noticeOf({
        seq: 2,
        type: "turn.completed",
        created_at: "",
        payload: { turnId: "t9", outcome, message },
      } as unknown as EventEnvelope);
    expect(ended("completed")).toMatchObject({ key: "turn:t9", type: "turn.completed", summary: "Finished." });
    expect(ended("error", "HTTP 500 from the provider")).toMatchObject({
      type: "turn.failed",
      summary: "Failed: HTTP 500 from the provider",
    });
    expect(ended("interrupted")?.type).toBe("turn.failed");
    expect(routineNotice({ runId: "r1", routine: "nightly", failed: true })).toMatchObject({
      key: "routine-run:r1",
      type: "routine.failed",
      summary: "nightly: The run failed.",
    });
  });

  it("accepts a browser's subscription and refuses a bad one", () => {
    const keys = { p256dh: "B" + "A".repeat(86), auth: "A".repeat(22) };
    expect(PushSubscriptionBody.safeParse({ endpoint: "https://fcm.googleapis.com/fcm/send/x", keys }).success).toBe(
      true,
    );
    expect(PushSubscriptionBody.safeParse({ endpoint: "http://[::1]:9/x", keys }).success).toBe(true);
    expect(PushSubscriptionBody.safeParse({ endpoint: "http://10.0.0.1/x", keys }).success).toBe(false);
    expect(
      PushSubscriptionBody.safeParse({ endpoint: "https://x.example/y", keys: { ...keys, auth: "AAAA" } }).success,
    ).toBe(false);
  });
});
