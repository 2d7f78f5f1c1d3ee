import { describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { messagesOf, startAgentBridge, useAgentBridge, type AgentBridge } from "./harness";

// Usage and cost a user can see, and the provider details a real user hits.

let fake: FakeLlm;
let bridge: AgentBridge;
useAgentBridge((started, running) => {
  fake = started;
  bridge = running;
});

const statsOf = (events: { event: string; data: Record<string, unknown> }[]) =>
  events.find((event) => event.event === "done")?.data.generation_stats as Record<string, number | null>;

async function put(pathname: string, body: unknown): Promise<Response> {
  return fetch(`${bridge.url}${pathname}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("usage and cost", () => {
  it("reports input, cached-input and output tokens per turn, and cost once the model has a price", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "first" });
    const first = statsOf(await bridge.chat(sessionId, "hello"));
    expect(first).toMatchObject({ input_tokens: expect.any(Number), cached_input_tokens: 0, cost_usd: null });
    expect(first.output_tokens).toBeGreaterThan(0);

    // The second turn's request starts with the whole first one: the fake's prefix cache serves most of it.
    fake.script({ text: "second" });
    const second = statsOf(await bridge.chat(sessionId, "again"));
    expect(second.cached_input_tokens).toBeGreaterThan(0);
    expect(second.cached_input_tokens! / second.input_tokens!).toBeGreaterThan(0.8);
    expect(fake.requests[1].body.prompt_cache_key).toBe(sessionId);

    const saved = await put("/api/v1/settings/prices", {
      prices: { "fake-model": { input: 1, cached_input: 0.1, output: 2 } },
    });
    expect(saved.status).toBe(200);
    expect(((await saved.json()) as { defaults: Record<string, unknown> }).defaults["gpt-4.1"]).toBeDefined();
    fake.script({
      text: "third",
      usage: {
        prompt_tokens: 1_000_000,
        completion_tokens: 1_000_000,
        prompt_tokens_details: { cached_tokens: 500_000 },
      },
    });
    const third = statsOf(await bridge.chat(sessionId, "priced"));
    // 500k uncached at $1/M + 500k cached at $0.1/M + 1M output at $2/M.
    expect(third.cost_usd).toBeCloseTo(0.5 + 0.05 + 2, 6);

    const session = (await (await bridge.api(`/api/v1/sessions/${sessionId}`)).json()) as {
      usage: Record<string, number | null>;
      cost_usd: number | null;
    };
    expect(session.usage).toMatchObject({
      input_tokens: first.input_tokens! + second.input_tokens! + 1_000_000,
      cached_input_tokens: second.cached_input_tokens! + 500_000,
      cost_usd: third.cost_usd,
    });
    const list = (await (await bridge.api("/api/v1/sessions")).json()) as { id: string; cost_usd: number | null }[];
    expect(list.find((entry) => entry.id === sessionId)?.cost_usd).toBeCloseTo(2.55, 6);
    const usage = (await bridge.events(sessionId)).filter((event) => event.type === "context.usage").at(-1);
    expect(usage?.type === "context.usage" && usage.payload.cachedInputTokens).toBe(500_000);
    await put("/api/v1/settings/prices", { prices: {} });
  });

  it("reads DeepSeek's prompt_cache_hit_tokens", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "hi", usage: { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 80 } });
    expect(statsOf(await bridge.chat(sessionId, "hi"))).toMatchObject({ input_tokens: 100, cached_input_tokens: 80 });
  });
});

describe("provider details", () => {
  it("shows a 400's message in the transcript and does not retry it", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ status: 400, body: { error: { message: "This model's maximum context length is 8192 tokens." } } });
    const events = await bridge.chat(sessionId, "too long");
    expect(fake.requests).toHaveLength(1);
    const error = events.find((event) => event.event === "error");
    expect(String(error?.data.message)).toContain("maximum context length is 8192 tokens");
  });

  it("drops reasoning_content from history by default (DeepSeek refuses it in input)", async () => {
    const sessionId = await bridge.createSession();
    fake.script(
      { reasoning: "Let me list.", toolCalls: [{ name: "list_dir", arguments: {} }] },
      { reasoning: "Done.", text: "listed" },
    );
    await bridge.chat(sessionId, "list");
    const assistant = messagesOf(fake.requests[1]).find((m) => m.role === "assistant") as Record<string, unknown>;
    expect(assistant.tool_calls).toBeDefined();
    expect(assistant.reasoning_content).toBeUndefined();
  });
});

describe("servers that refuse unknown fields", () => {
  it("get the request again without prompt_cache_key, and never see it after", async () => {
    const strictFake = await startFakeLlm({ rejectFields: ["prompt_cache_key"] });
    const other = await startAgentBridge(strictFake.url);
    try {
      const sessionId = await other.createSession();
      strictFake.script({ text: "one" }, { text: "two" });
      await other.chat(sessionId, "first");
      await other.chat(sessionId, "second");
      expect(strictFake.requests.map((request) => "prompt_cache_key" in request.body)).toEqual([true, false, false]);
      const turns = (await other.events(sessionId)).filter((event) => event.type === "turn.completed");
      expect(turns.map((event) => event.type === "turn.completed" && event.payload.outcome)).toEqual([
        "completed",
        "completed",
      ]);
    } finally {
      await other.close();
      await strictFake.close();
    }
  });

  it("keep reasoning_content on tool-call turns for Kimi-style providers", async () => {
    const kimiFake = await startFakeLlm();
    const kimi = await startAgentBridge(kimiFake.url, { env: { WORLDLINE_REASONING_HISTORY: "tool_calls" } });
    try {
      const sessionId = await kimi.createSession();
      kimiFake.script(
        { reasoning: "Need the listing.", toolCalls: [{ name: "list_dir", arguments: {} }] },
        { reasoning: "Fine.", text: "listed" },
      );
      await kimi.chat(sessionId, "list");
      const assistant = messagesOf(kimiFake.requests[1]).find((m) => m.role === "assistant") as Record<string, unknown>;
      expect(assistant.reasoning_content).toBe("Need the listing.");
    } finally {
      await kimi.close();
      await kimiFake.close();
    }
  });
});

describe("models from the Settings page", () => {
  it("marked without vision refuse a prompt with images with a clear message, without calling the model", async () => {
    const visionFake = await startFakeLlm();
    // No model from the environment: the Settings page's default model, marked without images, is used.
    const settingsOnly = await startAgentBridge(visionFake.url, { env: { WORLDLINE_MODEL: "" } });
    try {
      const json = { "content-type": "application/json", authorization: `Bearer ${settingsOnly.token}` };
      const provider = await fetch(`${settingsOnly.url}/api/v1/settings/providers`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({
          kind: "openai_compatible",
          name: "Local",
          baseURL: visionFake.url,
          // Per-provider settings (server/agent/provider-quirks.ts): this one takes no prompt_cache_key.
          options: { promptCacheKey: false },
          models: [
            { id: "text-only", contextWindow: 32_000, capabilities: { tools: true, images: false, thinking: false } },
          ],
        }),
      });
      const providerId = ((await provider.json()) as { providers: { id: string }[] }).providers[0].id;
      await fetch(`${settingsOnly.url}/api/v1/settings/default-model`, {
        method: "PUT",
        headers: json,
        body: JSON.stringify({ providerId, model: "text-only" }),
      });
      const sessionId = await settingsOnly.createSession();
      const started = await settingsOnly.services.runtime.prompt(sessionId, "What is in this picture?", {
        images: ["data:image/png;base64,iVBORw0KGgo="],
      });
      expect((await started.done).outcome).toBe("error");
      expect(visionFake.requests).toHaveLength(0);
      const error = (await settingsOnly.events(sessionId)).find((event) => event.type === "turn.error");
      expect(error?.type === "turn.error" && error.payload).toMatchObject({
        code: "model:no_vision",
        message: expect.stringContaining("text-only is marked without image input"),
      });
      // Without images the same model answers; the provider's own settings apply.
      visionFake.script({ text: "words only" });
      expect(
        (await (await settingsOnly.services.runtime.prompt(sessionId, "Describe it in words.")).done).outcome,
      ).toBe("completed");
      expect(visionFake.requests).toHaveLength(1);
      expect("prompt_cache_key" in visionFake.requests[0].body).toBe(false);
    } finally {
      await settingsOnly.close();
      await visionFake.close();
    }
  });
});
