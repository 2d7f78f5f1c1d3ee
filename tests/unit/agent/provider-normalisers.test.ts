import { describe, expect, it } from "vitest";
import { parseChunk } from "../../../server/agent/provider/chunk";
import { readContentParts } from "../../../server/agent/provider/content-parts";
import { readErrorChunk } from "../../../server/agent/provider/error-chunk";
import { sseEvents } from "../../../server/agent/provider/sse";
import { ThinkTagSplitter, type ContentPiece } from "../../../server/agent/provider/think-tags";
import { ToolCallAssembler } from "../../../server/agent/provider/tool-call-deltas";
import { readUsage } from "../../../server/agent/provider/usage";
import { withReasoningHistory } from "../../../server/agent/provider-quirks";

// Each stream shape's normaliser on its own, on pieces cut where a network may cut them.

async function* bytes(...pieces: string[]) {
  for (const piece of pieces) yield new TextEncoder().encode(piece);
}

const joined = (pieces: ContentPiece[]) => ({
  reasoning: pieces
    .filter((p) => p.type === "reasoning")
    .map((p) => p.delta)
    .join(""),
  text: pieces
    .filter((p) => p.type === "text")
    .map((p) => p.delta)
    .join(""),
});

describe("sseEvents", () => {
  it("joins data lines, keeps event names, skips comments, and handles CRLF and events split across reads", async () => {
    const events = [];
    for await (const event of sseEvents(
      bytes(
        ": OPENROUTER PROCESSING\r\n\r\nda",
        'ta: {"a":1}\r\n\r\nevent: error\ndata: {"error":',
        '{"message":"x"}}\n\ndata: [DONE]',
      ),
    )) {
      events.push(event);
    }
    expect(events).toEqual([
      { data: '{"a":1}' },
      { event: "error", data: '{"error":{"message":"x"}}' },
      { data: "[DONE]" },
    ]);
  });
});

describe("ThinkTagSplitter", () => {
  it("reads <think> at the start as reasoning, even when the tags are split across chunks", () => {
    const splitter = new ThinkTagSplitter();
    const pieces = ["\n<th", "ink>\nplan", " it</th", "ink>\n\nThe ", "answer"].flatMap((c) => splitter.feed(c));
    expect(joined([...pieces, ...splitter.end()])).toEqual({ reasoning: "\nplan it", text: "The answer" });
    expect(splitter.sawTags).toBe(true);
  });

  it("leaves an answer that only mentions <think> later as text", () => {
    const splitter = new ThinkTagSplitter();
    const pieces = ["Use <think> tags", " like <think>this</think>"].flatMap((c) => splitter.feed(c));
    expect(joined([...pieces, ...splitter.end()])).toEqual({
      reasoning: "",
      text: "Use <think> tags like <think>this</think>",
    });
    expect(splitter.sawTags).toBe(false);
  });

  it("keeps a block the stream cut before </think> as reasoning", () => {
    const splitter = new ThinkTagSplitter();
    const pieces = ["<think>still going </thi"].flatMap((c) => splitter.feed(c));
    expect(joined([...pieces, ...splitter.end()])).toEqual({ reasoning: "still going </thi", text: "" });
  });
});

describe("readContentParts", () => {
  it("reads Mistral's thinking parts as reasoning and text parts as text", () => {
    expect(
      readContentParts([
        { type: "thinking", thinking: [{ type: "text", text: "Two and two." }] },
        { type: "text", text: "4" },
        { type: "reference", reference_ids: [1] },
      ]),
    ).toEqual({ reasoning: "Two and two.", text: "4" });
  });
});

describe("ToolCallAssembler", () => {
  it("assembles Mistral's calls without index by id, and repeats of a name change nothing", () => {
    const calls = new ToolCallAssembler();
    const pieces = [
      ...calls.add([{ id: "a", function: { name: "read", arguments: '{"p":1}' } }]),
      ...calls.add([{ id: "b", function: { name: "list", arguments: "{" } }]),
      ...calls.add([{ function: { name: "list", arguments: "}" } }]),
    ];
    expect(pieces).toEqual([
      { index: 0, id: "a", name: "read", argsDelta: '{"p":1}' },
      { index: 1, id: "b", name: "list", argsDelta: "{" },
      { index: 1, argsDelta: "}" },
    ]);
  });

  it("opens a new call for the same index with a different id", () => {
    const calls = new ToolCallAssembler();
    const pieces = [
      ...calls.add([{ index: 0, id: "a", function: { name: "t" } }]),
      ...calls.add([{ index: 0, id: "b" }]),
    ];
    expect(pieces.map((piece) => piece.index)).toEqual([0, 1]);
  });

  it("accepts any first index and gaps between calls (gateways pass Bedrock's content-block index)", () => {
    const calls = new ToolCallAssembler();
    const pieces = [
      ...calls.add([{ index: 1, id: "a", function: { name: "t", arguments: "" } }]),
      ...calls.add([{ index: 1, function: { arguments: "{}" } }]),
      ...calls.add([{ index: 3, id: "b", function: { name: "u", arguments: "{}" } }]),
    ];
    expect(pieces.map((piece) => [piece.index, piece.id, piece.name])).toEqual([
      [0, "a", "t"],
      [0, undefined, undefined],
      [1, "b", "u"],
    ]);
  });

  it("refuses an index that skips ahead to a piece that cannot open a call", () => {
    const calls = new ToolCallAssembler();
    calls.add([{ index: 0, id: "a", function: { name: "t" } }]);
    expect(() => calls.add([{ index: 3, function: { arguments: "}" } }])).toThrow(/jumped from 0 to 3/);
    expect(() => new ToolCallAssembler().add([{ index: 2, function: { arguments: "{" } }])).toThrow(
      /jumped from the start to 2/,
    );
  });
});

describe("readUsage", () => {
  it("adds reasoning billed outside completion_tokens (xAI) to the output", () => {
    const { usage } = readUsage({
      prompt_tokens: 12,
      completion_tokens: 2,
      total_tokens: 354,
      prompt_tokens_details: { cached_tokens: 11 },
      completion_tokens_details: { reasoning_tokens: 340 },
    });
    expect(usage).toEqual({ inputTokens: 12, outputTokens: 342, cachedInputTokens: 11, reasoningTokens: 340 });
  });

  it("keeps reasoning inside completion_tokens when the total says so (OpenAI)", () => {
    const { usage } = readUsage({
      prompt_tokens: 15,
      completion_tokens: 78,
      total_tokens: 93,
      completion_tokens_details: { reasoning_tokens: 64 },
    });
    expect(usage).toMatchObject({ outputTokens: 78, reasoningTokens: 64 });
  });

  it("reads DeepSeek's prompt_cache_hit_tokens", () => {
    expect(readUsage({ prompt_tokens: 100, completion_tokens: 1, prompt_cache_hit_tokens: 80 })).toMatchObject({
      usage: { cachedInputTokens: 80 },
      cacheForm: "prompt_cache_hit_tokens",
    });
  });
});

describe("parseChunk and readErrorChunk", () => {
  it("names what is wrong with a bad chunk", () => {
    expect(() => parseChunk("{oops")).toThrow("a stream chunk that is not JSON: {oops");
    expect(() => parseChunk('{"choices":"no"}')).toThrow(/unknown shape \(choices:/);
    expect(() => parseChunk('{"type":"response.created"}')).toThrow(/no choices, usage or error/);
  });

  it("tells a transient error chunk from a final one", () => {
    expect(readErrorChunk({ message: "Token limit reached", code: 400 }).transient).toBe(false);
    expect(readErrorChunk({ message: "busy", code: 502 }).transient).toBe(true);
    expect(readErrorChunk({ message: "x", type: "server_error" }).transient).toBe(true);
    expect(readErrorChunk({ message: "bad", code: "tool_use_failed", status_code: 400 }).transient).toBe(false);
  });
});

describe("withReasoningHistory", () => {
  const answer = (form?: "reasoning" | "think_tags" | "content_parts") => ({
    role: "assistant" as const,
    content: "4",
    reasoning_content: "Two and two.",
    ...(form ? { reasoning_form: form } : {}),
  });

  it("sends reasoning back in the form it arrived in, where the provider wants it", () => {
    expect(withReasoningHistory([answer()], "all")).toEqual([
      { role: "assistant", content: "4", reasoning_content: "Two and two." },
    ]);
    expect(withReasoningHistory([answer("reasoning")], "all")).toEqual([
      { role: "assistant", content: "4", reasoning: "Two and two." },
    ]);
    expect(withReasoningHistory([answer("think_tags")], "all")).toEqual([
      { role: "assistant", content: "<think>\nTwo and two.\n</think>\n\n4" },
    ]);
    expect(withReasoningHistory([answer("content_parts")], "all")).toEqual([
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: [{ type: "text", text: "Two and two." }] },
          { type: "text", text: "4" },
        ],
      },
    ]);
  });

  it("drops it, and the form marker, where the provider does not want it", () => {
    expect(withReasoningHistory([answer("think_tags")], "drop")).toEqual([{ role: "assistant", content: "4" }]);
    expect(withReasoningHistory([answer("reasoning")], "tool_calls")).toEqual([{ role: "assistant", content: "4" }]);
  });
});
