import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server.ts";

let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm({ models: ["fake-model", "fake-reasoner"] });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.onRequest = undefined;
});

interface SseResult {
  // Chunks are inspected loosely, the way a hand-written client would.
  chunks: any[];
  done: boolean;
}

function chat(body: Record<string, unknown>, init: RequestInit = {}): Promise<Response> {
  return fetch(`${fake.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer test-key" },
    body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "hi" }], ...body }),
    ...init,
  });
}

function parseSse(text: string): SseResult {
  const result: SseResult = { chunks: [], done: false };
  for (const event of text.split("\n\n")) {
    if (!event.startsWith("data: ")) continue;
    const data = event.slice("data: ".length);
    if (data === "[DONE]") result.done = true;
    else result.chunks.push(JSON.parse(data));
  }
  return result;
}

async function stream(body: Record<string, unknown> = {}): Promise<SseResult> {
  const res = await chat({ stream: true, ...body });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  return parseSse(await res.text());
}

function contentOf(result: SseResult, field: "content" | "reasoning_content" = "content"): string {
  return result.chunks.map((c) => c.choices[0]?.delta?.[field] ?? "").join("");
}

describe("fake LLM wire format", () => {
  it("streams text as small content deltas with chunk metadata and [DONE]", async () => {
    fake.script({ text: "Hello there, world", chunkSize: 5 });
    const result = await stream({ model: "fake-reasoner" });

    expect(result.done).toBe(true);
    expect(contentOf(result)).toBe("Hello there, world");
    const contentChunks = result.chunks.filter((c) => c.choices[0]?.delta?.content);
    expect(contentChunks.map((c) => c.choices[0].delta.content)).toEqual(["Hello", " ther", "e, wo", "rld"]);
    for (const c of result.chunks) {
      expect(c).toMatchObject({ id: result.chunks[0].id, object: "chat.completion.chunk", model: "fake-reasoner" });
      expect(typeof c.created).toBe("number");
    }
    expect(result.chunks[0].choices[0].delta.role).toBe("assistant");
    const finish = result.chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish.choices[0].finish_reason).toBe("stop");
  });

  it("streams reasoning_content before the content", async () => {
    fake.script({ reasoning: "Let me think.", text: "Done." });
    const result = await stream();

    expect(contentOf(result, "reasoning_content")).toBe("Let me think.");
    expect(contentOf(result)).toBe("Done.");
    const deltas = result.chunks.map((c) => c.choices[0]?.delta ?? {});
    const lastReasoning = deltas.findLastIndex((d) => d.reasoning_content);
    const firstContent = deltas.findIndex((d) => d.content);
    expect(lastReasoning).toBeLessThan(firstContent);
  });

  it("splits the arguments of parallel tool calls across interleaved chunks that reassemble to JSON", async () => {
    const readArgs = { path: "src/index.ts", limit: 200 };
    fake.script({
      toolCalls: [
        { name: "read_file", arguments: readArgs },
        { id: "call_custom", name: "bash", arguments: '{"command":"ls -la"}' },
      ],
    });
    const result = await stream();

    const calls: { id?: string; name?: string; args: string }[] = [];
    const indexOrder: number[] = [];
    for (const c of result.chunks) {
      for (const tc of c.choices[0]?.delta?.tool_calls ?? []) {
        indexOrder.push(tc.index);
        const call = (calls[tc.index] ??= { args: "" });
        if (tc.id) {
          expect(tc).toMatchObject({ type: "function", function: { name: expect.any(String) } });
          call.id = tc.id;
          call.name = tc.function.name;
        }
        call.args += tc.function?.arguments ?? "";
      }
    }
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ id: "call_1", name: "read_file" });
    expect(JSON.parse(calls[0].args)).toEqual(readArgs);
    expect(calls[1]).toMatchObject({ id: "call_custom", name: "bash" });
    expect(JSON.parse(calls[1].args)).toEqual({ command: "ls -la" });
    // Several argument chunks per call, and the two calls alternate rather than run back to back.
    expect(indexOrder.filter((i) => i === 0).length).toBeGreaterThan(3);
    expect(indexOrder.indexOf(1)).toBeLessThan(indexOrder.lastIndexOf(0));
    const finish = result.chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish.choices[0].finish_reason).toBe("tool_calls");
  });

  it("ends with a usage chunk without choices, scripted or estimated", async () => {
    fake.script({ text: "ok", usage: { prompt_tokens: 11, completion_tokens: 7 } }, { text: "a longer answer here" });

    const scripted = await stream();
    const last = scripted.chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });

    const estimated = (await stream()).chunks.at(-1).usage;
    expect(estimated.completion_tokens).toBe(5);
    expect(estimated.prompt_tokens).toBeGreaterThan(0);
    expect(estimated.total_tokens).toBe(estimated.prompt_tokens + 5);
  });

  it("answers with one JSON completion when stream is absent", async () => {
    fake.script({ text: "plain", toolCalls: [{ name: "glob", arguments: { pattern: "*.ts" } }] });
    const res = await chat({});
    const body = await res.json();

    expect(res.headers.get("content-type")).toBe("application/json");
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0].message).toMatchObject({
      role: "assistant",
      content: "plain",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "glob", arguments: '{"pattern":"*.ts"}' } }],
    });
    expect(body.choices[0].finish_reason).toBe("tool_calls");
    expect(body.usage.total_tokens).toBeGreaterThan(0);
  });

  it("returns scripted HTTP errors with OpenAI's error shape and headers", async () => {
    fake.script({ status: 429, headers: { "retry-after": "1" } }, { status: 500 }, { status: 401 });

    const limited = await chat({ stream: true });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await limited.json()).error).toMatchObject({ message: "Rate limit exceeded", code: "rate_limit_exceeded" });

    const failed = await chat({ stream: true });
    expect(failed.status).toBe(500);
    expect((await failed.json()).error).toMatchObject({ message: "Internal server error", type: "server_error" });

    const denied = await chat({});
    expect(denied.status).toBe(401);
    expect((await denied.json()).error.message).toBe("Invalid API key");
  });

  it("cuts the stream mid-way so the client sees a network error and no [DONE]", async () => {
    fake.script({ cut: true, afterText: "partial answer" });
    const res = await chat({ stream: true });
    expect(res.status).toBe(200);

    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = "";
    const failure = await (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return undefined;
        received += decoder.decode(value, { stream: true });
      }
    })().catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(Error);
    expect(received).not.toContain("[DONE]");
    expect(contentOf(parseSse(received))).toBe("partial answer");
  });

  it("streams nothing but [DONE] for an empty response", async () => {
    fake.script({ empty: true });
    const result = await stream();
    expect(result).toEqual({ chunks: [], done: true });
  });

  it("hangs until the client aborts, and keeps serving afterwards", async () => {
    fake.script({ hang: true });
    const aborted = chat({ stream: true }, { signal: AbortSignal.timeout(150) });
    await expect(aborted).rejects.toThrow();
    expect(fake.requests).toHaveLength(1);
    expect(contentOf(await stream())).toBe("Echo: hi");
  });

  it("echoes the text parts of the last user message by default", async () => {
    const result = await stream({
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "first" },
        { role: "assistant", content: "ok" },
        {
          role: "user",
          content: [
            { type: "text", text: "what is " },
            { type: "image_url", image_url: { url: "data:," } },
            { type: "text", text: "this?" },
          ],
        },
      ],
    });
    expect(contentOf(result)).toBe("Echo: what is this?");
  });

  it("records requests and consults onRequest before the queue", async () => {
    fake.script({ text: "from queue" });
    fake.onRequest = (req) => (req.body.messages[0].content === "special" ? { text: "dynamic" } : undefined);

    expect(contentOf(await stream({ messages: [{ role: "user", content: "special" }] }))).toBe("dynamic");
    expect(contentOf(await stream())).toBe("from queue");
    expect(fake.requests.map((r) => r.body.messages[0].content)).toEqual(["special", "hi"]);
    expect(fake.requests[0].headers.authorization).toBe("Bearer test-key");
    expect(fake.requests[0].at).toBeLessThanOrEqual(Date.now());
  });

  it("lets another process script, inspect and reset it through /__admin", async () => {
    const root = fake.url.replace(/\/v1$/, "");
    const scripted = await fetch(`${root}/__admin/script`, {
      method: "POST",
      body: JSON.stringify([{ text: "scripted remotely" }, { status: 503 }]),
    });
    expect(await scripted.json()).toEqual({ queued: 2 });

    expect(contentOf(await stream())).toBe("scripted remotely");
    const recorded = await (await fetch(`${root}/__admin/requests`)).json();
    expect(recorded).toHaveLength(1);
    expect(recorded[0].body.model).toBe("fake-model");

    await fetch(`${root}/__admin/reset`, { method: "POST" });
    expect(fake.requests).toHaveLength(0);
    // The queued 503 was dropped by the reset, so the default echo answers.
    expect(contentOf(await stream())).toBe("Echo: hi");
  });

  it("lists the configured models", async () => {
    const res = await fetch(`${fake.url}/models`);
    const body = await res.json();
    expect(body.object).toBe("list");
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(["fake-model", "fake-reasoner"]);
  });
});

describe("a caching, strict server", () => {
  const conversation = [
    { role: "system", content: "You are a test." },
    { role: "user", content: "first question" },
  ];

  it("reports the prefix it saw before as cached prompt tokens", async () => {
    fake.script({ text: "one" }, { text: "two" });
    const first = (await (await chat({ messages: conversation })).json()) as { usage: Record<string, unknown> };
    expect(first.usage.prompt_tokens_details).toEqual({ cached_tokens: 0 });
    const longer = [...conversation, { role: "assistant", content: "one" }, { role: "user", content: "second" }];
    const second = (await (await chat({ messages: longer })).json()) as {
      usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
    };
    const cached = second.usage.prompt_tokens_details.cached_tokens;
    // Everything but the closing bracket of the first request's messages.
    expect(cached).toBe(Math.floor((JSON.stringify(conversation).length - 1) / 4));
    expect(cached).toBeLessThan(second.usage.prompt_tokens);
  });

  it("caches nothing when the tool list changed (tools come first in every template)", async () => {
    fake.script({ text: "one" }, { text: "two" });
    await chat({ messages: conversation });
    const withTools = (await (
      await chat({ messages: conversation, tools: [{ type: "function", function: { name: "t", parameters: {} } }] })
    ).json()) as { usage: { prompt_tokens_details: { cached_tokens: number } } };
    expect(withTools.usage.prompt_tokens_details.cached_tokens).toBe(0);
  });

  it("answers 400 to two consecutive messages of one role, as strict chat templates do", async () => {
    const res = await chat({ messages: [...conversation, { role: "user", content: "again" }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      "Conversation roles must alternate",
    );
    // Consecutive tool results are the normal protocol.
    const tools = [
      ...conversation,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "a", type: "function", function: { name: "t", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "t", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "a", content: "1" },
      { role: "tool", tool_call_id: "b", content: "2" },
    ];
    expect((await chat({ messages: tools })).status).toBe(200);
  });

  it("accepts them when strict mode is off", async () => {
    fake.strict = false;
    try {
      expect((await chat({ messages: [...conversation, { role: "user", content: "again" }] })).status).toBe(200);
    } finally {
      fake.strict = true;
    }
  });
});
