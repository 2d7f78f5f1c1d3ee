import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../server/agent/provider";
import { toWireMessages, type WireEntry } from "../../../server/agent/wire-messages";

const m = (message: ChatMessage): WireEntry => ({ message });
const cp = (checkpoint: number): WireEntry => ({ checkpoint });
const call = (id: string) => ({ id, type: "function" as const, function: { name: "t", arguments: "{}" } });

describe("toWireMessages", () => {
  it("merges consecutive user messages (a prompt after a failed turn, a summary before a kept prompt)", () => {
    const out = toWireMessages([m({ role: "user", content: "a" }), m({ role: "user", content: "b" })]);
    expect(out).toEqual([{ role: "user", content: "a\n\nb" }]);
  });

  it("keeps consecutive tool results apart: one per call is the protocol", () => {
    const entries = [
      m({ role: "user", content: "go" }),
      m({ role: "assistant", content: null, tool_calls: [call("a"), call("b")] }),
      m({ role: "tool", tool_call_id: "a", content: "1" }),
      m({ role: "tool", tool_call_id: "b", content: "2" }),
    ];
    expect(toWireMessages(entries).map((message) => message.role)).toEqual(["user", "assistant", "tool", "tool"]);
  });

  it("puts checkpoint ids inside the message before them, or the next user message after an answer", () => {
    const entries = [
      m({ role: "assistant", content: "earlier answer" }),
      cp(4),
      m({ role: "user", content: "prompt" }),
      cp(5),
      m({ role: "assistant", content: null, tool_calls: [call("a")] }),
      m({ role: "tool", tool_call_id: "a", content: "out" }),
      cp(6),
    ];
    expect(toWireMessages(entries, { checkpoints: true })).toEqual([
      { role: "assistant", content: "earlier answer" },
      { role: "user", content: "<system>CHECKPOINT 4</system>\n\nprompt\n\n<system>CHECKPOINT 5</system>" },
      { role: "assistant", content: null, tool_calls: [call("a")] },
      { role: "tool", tool_call_id: "a", content: "out\n\n<system>CHECKPOINT 6</system>" },
    ]);
    expect(toWireMessages(entries).map((message) => message.content)).toEqual([
      "earlier answer",
      "prompt",
      null,
      "out",
    ]);
  });

  it("renders an earlier message the same way once later records follow (append-only)", () => {
    const start: WireEntry[] = [m({ role: "user", content: "p" }), cp(1)];
    const before = toWireMessages(start, { checkpoints: true });
    const after = toWireMessages([...start, m({ role: "assistant", content: "a" }), cp(2)], { checkpoints: true });
    expect(after.slice(0, before.length)).toEqual(before);
  });

  it("joins markers to a prompt's text part when it carries images", () => {
    const image = { type: "image_url" as const, image_url: { url: "data:image/png;base64,x" } };
    const out = toWireMessages([m({ role: "user", content: [{ type: "text", text: "look" }, image] }), cp(1)], {
      checkpoints: true,
    });
    expect(out).toEqual([
      { role: "user", content: [{ type: "text", text: "look\n\n<system>CHECKPOINT 1</system>" }, image] },
    ]);
  });
});
