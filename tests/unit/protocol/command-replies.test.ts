import { describe, expect, it } from "vitest";
import { Ack, commandReplies } from "../../../server/protocol";

describe("command acks as the tab reads them", () => {
  it("reads an ack as an answer or an error, and nothing else", () => {
    expect(Ack.parse({ ok: true, data: { terminalId: "t1" } })).toEqual({ ok: true, data: { terminalId: "t1" } });
    expect(Ack.parse({ ok: false, error: { code: "pty:not_found", message: "gone" } }).ok).toBe(false);
    expect(Ack.safeParse({ ok: false }).success).toBe(false);
    expect(Ack.safeParse("ok").success).toBe(false);
  });

  it("checks the answers the UI reads, leaving each subscribed event to its own check", () => {
    expect(commandReplies["pty.run"].safeParse({ terminalId: 3 }).success).toBe(false);
    expect(commandReplies["approvals.subscribe"].safeParse({ pending: [{}] }).success).toBe(false);
    const subscribed = commandReplies["session.subscribe"].parse({ events: [{ drifted: true }], lastSeq: 4 });
    expect(subscribed.events).toEqual([{ drifted: true }]);
    const badSnapshot = { events: [], lastSeq: 4, snapshot: { state: { lastSeq: 4 } } };
    expect(commandReplies["session.subscribe"].safeParse(badSnapshot).success).toBe(false);
  });
});
