import { describe, expect, it } from "vitest";
import { checkedEvents } from "../../../components/shared/checked-events";
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
    expect(checkedEvents([good, drifted, unknownType], (m) => reports.push(m))).toEqual([good]);
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatch(/event #2 \(notice\) does not match the protocol/);
  });

  it("leaves out an event whose envelope is broken (no seq)", () => {
    const reports: string[] = [];
    const noSeq = { type: "notice", payload: { level: "info", text: "x" }, createdAt: "" };
    expect(checkedEvents([noSeq], (m) => reports.push(m))).toEqual([]);
    expect(reports[0]).toMatch(/does not match the protocol/);
  });
});
