import { describe, expect, it } from "vitest";
import type { ProviderChunk, ToolCallMessagePart } from "../../../server/agent/provider";
import { StatsCollector } from "../../../server/agent/stats";
import { emptyPartial, streamStep } from "../../../server/agent/stream-step";
import type { SessionEvent } from "../../../server/protocol";
import { ScriptedModel } from "../../support/scripted-model";

// How one step's model call ends, on scripted streams (the recorded ones run in
// tests/integration/agent/provider-corpus.test.ts).

async function step(model: ScriptedModel, maxRetries = 3) {
  const events: SessionEvent[] = [];
  const ready: ToolCallMessagePart[] = [];
  const partial = emptyPartial();
  const run = streamStep(
    model,
    { model: "scripted", messages: [{ role: "user", content: "go" }] },
    {
      signal: new AbortController().signal,
      emit: { turnId: "turn_1", event: (event) => void events.push(event) },
      policy: { maxRetries, baseDelayMs: 1, maxDelayMs: 1 },
      partial,
      onToolCallReady: (call) => void ready.push(call),
    },
  );
  return { run, events, ready, partial };
}

const call = (index: number, name: string | undefined, argsDelta: string): ProviderChunk => ({
  type: "tool_call",
  index,
  ...(name ? { id: `call_${index}`, name } : {}),
  argsDelta,
});

describe("streamStep", () => {
  it("never runs a call with no arguments when the output limit ended the step", async () => {
    const model = new ScriptedModel({
      chunks: [call(0, "list_dir", '{"path":"."}'), call(1, "write_file", ""), { type: "finish", reason: "length" }],
    });
    const { run, ready } = await step(model);
    const result = await run;
    expect(result.stop).toBe("truncated");
    expect(result.toolCalls.map((c) => c.function.name)).toEqual(["list_dir"]);
    expect(result.cutCalls).toEqual(["write_file"]);
    expect(ready.map((c) => c.function.name)).toEqual(["list_dir"]);
  });

  it("still reads a call with no arguments as {} when the step ended normally", async () => {
    const model = new ScriptedModel({ chunks: [call(0, "list_dir", ""), { type: "finish", reason: "tool_calls" }] });
    const result = await (await step(model)).run;
    expect(result.toolCalls.map((c) => c.function.arguments)).toEqual(["{}"]);
    expect(result.cutCalls).toEqual([]);
  });

  it("does not retry a broken attempt once one of its tool calls started", async () => {
    const broken: ProviderChunk[] = [
      { type: "text", delta: "Looking." },
      call(0, "list_dir", '{"path":"."}'),
      { type: "error", message: "upstream overloaded", code: "502", transient: true },
    ];
    const model = new ScriptedModel({ chunks: broken }, { text: "never asked for" });
    const { run, ready, events, partial } = await step(model);
    await expect(run).rejects.toThrow(
      "The model provider reported an error (502): upstream overloaded. Not retried: the call to list_dir had already run.",
    );
    expect(model.requests).toHaveLength(1);
    expect(ready.map((c) => c.function.name)).toEqual(["list_dir"]);
    expect(events.filter((event) => event.type === "turn.retry")).toEqual([]);
    expect(partial.text).toBe("Looking.");
  });

  it("still retries a broken attempt that started no tool", async () => {
    const model = new ScriptedModel(
      {
        chunks: [
          { type: "text", delta: "Hel" },
          { type: "error", message: "busy", code: "502", transient: true },
        ],
      },
      { text: "Hello" },
    );
    const result = await (await step(model)).run;
    expect(result.attempts).toBe(2);
    expect(result.message.content).toBe("Hello");
  });

  it("keeps the reasoning a failed attempt streamed, in the form it came in", async () => {
    const model = new ScriptedModel({
      chunks: [
        { type: "reasoning", delta: "thinking" },
        { type: "error", message: "bad request", code: "invalid_request_error", transient: false },
        { type: "forms", reasoning: "reasoning", cache: "none" },
      ],
    });
    const { run, partial } = await step(model);
    await expect(run).rejects.toThrow(/bad request/);
    expect(partial).toEqual({ text: "", reasoning: "thinking", form: "reasoning" });
  });
});

describe("StatsCollector", () => {
  it("bills a failed attempt's output without counting it in the rates", () => {
    const stats = new StatsCollector({ input: 1, cached_input: 0.5, output: 10 });
    stats.addFailedAttempt({ inputTokens: 100, outputTokens: 50 });
    stats.addStep(2, 1);
    stats.addUsage({ inputTokens: 100 });
    expect(stats.result()).toMatchObject({
      output_tokens: 52,
      seconds: 1,
      avg_tokens_per_second: 2,
      max_tokens_per_second: 2,
      input_tokens: 200,
      cost_usd: (200 * 1 + 52 * 10) / 1_000_000,
    });
  });

  it("sums cache writes, null until a provider reports them", () => {
    const stats = new StatsCollector();
    stats.addUsage({ inputTokens: 10 });
    expect(stats.result().cache_write_tokens).toBeNull();
    stats.addUsage({ inputTokens: 1200, cacheWriteTokens: 150 });
    stats.addUsage({ inputTokens: 1200, cacheWriteTokens: 50 });
    expect(stats.result().cache_write_tokens).toBe(200);
  });
});
