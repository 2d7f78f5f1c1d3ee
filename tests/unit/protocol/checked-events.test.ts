import { describe, expect, it } from "vitest";
import { checkedEvents } from "../../../components/session/checked-events";
import type { EventEnvelope } from "../../../server/protocol";

describe("the UI's check of bridge events", () => {
  it("keeps events that match the protocol and reports, then drops, a drifted one", () => {
    const reports: string[] = [];
    const good = {
      seq: 1,
      type: "notice",
      payload: { level: "info", text: "hello" },
      createdAt: new Date().toISOString(),
    } as EventEnvelope;
    const drifted = {
      seq: 2,
      type: "notice",
      payload: { level: "loud", words: "renamed field" },
      createdAt: new Date().toISOString(),
    } as unknown as EventEnvelope;
    const unknownType = { ...good, seq: 3, type: "notice.v2" } as unknown as EventEnvelope;
    expect(checkedEvents([good, drifted, unknownType], (m) => reports.push(m), true)).toEqual([good]);
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatch(/event #2 \(notice\) does not match the protocol/);
  });

  it("validates by default outside production (as in tests)", () => {
    const reports: string[] = [];
    const drifted = { seq: 9, type: "notice", payload: {}, createdAt: "" } as unknown as EventEnvelope;
    expect(checkedEvents([drifted], (m) => reports.push(m))).toEqual([]);
    expect(reports).toHaveLength(1);
  });
});
