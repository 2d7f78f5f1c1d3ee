import { describe, expect, it } from "vitest";
import { decisionFor, describeToolCall, promptText, UpdateTranslator } from "../../../server/acp";
import { errorLine, isRetryableError } from "../../../server/acp/turn";
import type { EventEnvelope } from "../../../server/protocol";

const WS = "/work/project";
let seq = 0;
const envelope = (event: Omit<EventEnvelope, "seq" | "createdAt">) =>
  ({ seq: ++seq, createdAt: new Date(0).toISOString(), ...event }) as EventEnvelope;

describe("describeToolCall", () => {
  it("gives tool calls human titles, kinds and absolute locations", () => {
    expect(describeToolCall("read_file", { path: "src/a.ts", offset: 10 }, WS)).toEqual({
      title: "Read file: src/a.ts",
      kind: "read",
      locations: [{ path: "/work/project/src/a.ts", line: 10 }],
    });
    expect(describeToolCall("shell", { command: "ls -la" }, WS)).toMatchObject({
      title: "Run command: ls -la",
      kind: "execute",
      locations: [],
    });
    expect(describeToolCall("str_replace", { path: "b.ts", edits: [] }, WS)).toMatchObject({
      title: "Edit file: b.ts",
      kind: "edit",
    });
    expect(describeToolCall("grep", { pattern: "TODO" }, WS)).toMatchObject({ title: "Search: TODO", kind: "search" });
    expect(describeToolCall("fetch_url", { url: "https://x.dev" }, WS)).toMatchObject({
      title: "Fetch: https://x.dev",
      kind: "fetch",
    });
    expect(describeToolCall("mcp__github__issues", {}, WS)).toMatchObject({
      title: "MCP: github__issues",
      kind: "other",
    });
  });

  it("keeps multi-line commands on one line and cuts long ones", () => {
    const { title } = describeToolCall("shell", { command: `echo a\necho ${"x".repeat(300)}` }, WS);
    expect(title.startsWith("Run command: echo a ⏎ echo x")).toBe(true);
    expect(title.length).toBeLessThanOrEqual(214);
    expect(title).not.toContain("\n");
  });
});

describe("UpdateTranslator", () => {
  it("maps deltas, tool calls with diffs, todo plans and usage to ACP updates", () => {
    const t = new UpdateTranslator(WS);
    expect(
      t.translate(
        envelope({
          type: "message.part.delta",
          payload: { turnId: "t", messageId: "m", part: "reasoning", delta: "hm" },
        }),
      ),
    ).toEqual([{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hm" }, messageId: "m" }]);
    const [call] = t.translate(
      envelope({
        type: "tool.call",
        payload: {
          turnId: "t",
          messageId: "c1",
          toolCallId: "c1",
          name: "str_replace",
          args: { path: "a.ts", edits: [{ old_text: "x", new_text: "y" }] },
        },
      }),
    );
    expect(call).toMatchObject({
      sessionUpdate: "tool_call",
      title: "Edit file: a.ts",
      kind: "edit",
      status: "pending",
    });
    expect(
      t.translate(envelope({ type: "tool.state", payload: { turnId: "t", toolCallId: "c1", state: "running" } })),
    ).toEqual([{ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" }]);
    const [done] = t.translate(
      envelope({
        type: "tool.state",
        payload: { turnId: "t", toolCallId: "c1", state: "completed", output: "Edited a.ts" },
      }),
    );
    expect(done).toMatchObject({
      sessionUpdate: "tool_call_update",
      status: "completed",
      content: [
        { type: "diff", path: "/work/project/a.ts", oldText: "x", newText: "y" },
        { type: "content", content: { type: "text", text: "Edited a.ts" } },
      ],
    });
    expect(
      t.translate(
        envelope({
          type: "todo.updated",
          payload: {
            items: [
              { title: "write tests", status: "done" },
              { title: "ship", status: "pending" },
            ],
          },
        }),
      ),
    ).toEqual([
      {
        sessionUpdate: "plan",
        entries: [
          { content: "write tests", priority: "medium", status: "completed" },
          { content: "ship", priority: "medium", status: "pending" },
        ],
      },
    ]);
    expect(t.translate(envelope({ type: "context.usage", payload: { tokens: 500, window: 1000 } }))).toEqual([
      { sessionUpdate: "usage_update", used: 500, size: 1000 },
    ]);
  });

  it("sends user messages only when replaying", () => {
    const t = new UpdateTranslator(WS);
    const user = envelope({ type: "message.user", payload: { turnId: "t", messageId: "u", text: "hi" } });
    expect(t.translate(user)).toEqual([]);
    expect(t.translate(user, { replay: true })).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } },
    ]);
  });

  it("reports a failed tool call as failed without a diff", () => {
    const t = new UpdateTranslator(WS);
    t.translate(
      envelope({
        type: "tool.call",
        payload: {
          turnId: "t",
          messageId: "c",
          toolCallId: "c",
          name: "write_file",
          args: { path: "n.txt", content: "new" },
        },
      }),
    );
    const [failed] = t.translate(
      envelope({
        type: "tool.state",
        payload: { turnId: "t", toolCallId: "c", state: "error", output: "denied", isError: true },
      }),
    );
    expect(failed).toMatchObject({
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: "denied" } }],
    });
  });
});

describe("promptText", () => {
  it("inlines text resources, references links and names images", () => {
    const text = promptText([
      { type: "text", text: "Look:" },
      { type: "resource", resource: { uri: "file:///w/a.ts", text: "const a = 1;" } },
      { type: "resource_link", uri: "file:///w/b.ts", name: "b.ts" },
      { type: "image", mimeType: "image/png", data: "AAAA" },
    ]);
    expect(text).toContain("Look:");
    expect(text).toContain('<resource uri="/w/a.ts">\nconst a = 1;\n</resource>');
    expect(text).toContain("[File: /w/b.ts]");
    expect(text).toContain("image/png");
  });
});

describe("permissions and errors", () => {
  it("maps client answers to queue decisions; cancelled is a rejection", () => {
    expect(decisionFor({ outcome: { outcome: "selected", optionId: "allow_once" } })).toBe("allow_once");
    expect(decisionFor({ outcome: { outcome: "selected", optionId: "allow_always" } })).toBe("allow_session");
    expect(decisionFor({ outcome: { outcome: "selected", optionId: "reject_once" } })).toBe("reject");
    expect(decisionFor({ outcome: { outcome: "cancelled" } })).toBe("reject");
  });

  it("formats provider errors for stderr sniffers and classifies retryable ones", () => {
    expect(errorLine({ code: "provider:rate_limited", message: "HTTP 429: slow down" })).toBe(
      "[ERROR] RateLimitError: HTTP 429: slow down",
    );
    expect(isRetryableError("provider:rate_limited")).toBe(true);
    expect(isRetryableError("provider:unavailable")).toBe(true);
    expect(isRetryableError("provider:auth")).toBe(false);
    expect(isRetryableError(undefined)).toBe(false);
  });
});
