// Proves the fake speaks the protocol the real `openai` client expects, and that the CLI runs it.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server.ts";

let fake: FakeLlm;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeLlm();
  client = new OpenAI({ baseURL: fake.url, apiKey: "x", maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe("fake LLM with the openai client", () => {
  it("accumulates streamed content, reasoning and parallel tool calls", async () => {
    fake.script({
      reasoning: "need two files",
      text: "Reading both.",
      toolCalls: [
        { name: "read_file", arguments: { path: "a.ts" } },
        { name: "read_file", arguments: { path: "b/c.ts", offset: 10 } },
      ],
      chunkSize: 3,
    });
    const stream = await client.chat.completions.create({
      model: "fake-model",
      messages: [{ role: "user", content: "read a and b" }],
      stream: true,
      stream_options: { include_usage: true },
    });

    let content = "";
    let reasoning = "";
    let finishReason: string | null = null;
    let totalTokens = 0;
    const calls: { id: string; name: string; args: string }[] = [];
    for await (const chunk of stream) {
      if (chunk.usage) totalTokens = chunk.usage.total_tokens;
      const choice = chunk.choices[0];
      if (!choice) continue;
      content += choice.delta.content ?? "";
      // reasoning_content is a provider extension the SDK types do not declare.
      reasoning += (choice.delta as { reasoning_content?: string }).reasoning_content ?? "";
      finishReason = choice.finish_reason ?? finishReason;
      for (const tc of choice.delta.tool_calls ?? []) {
        const call = (calls[tc.index] ??= { id: "", name: "", args: "" });
        call.id += tc.id ?? "";
        call.name += tc.function?.name ?? "";
        call.args += tc.function?.arguments ?? "";
      }
    }

    expect(content).toBe("Reading both.");
    expect(reasoning).toBe("need two files");
    expect(finishReason).toBe("tool_calls");
    expect(totalTokens).toBeGreaterThan(0);
    expect(calls.map((c) => [c.id, c.name, JSON.parse(c.args)])).toEqual([
      ["call_1", "read_file", { path: "a.ts" }],
      ["call_2", "read_file", { path: "b/c.ts", offset: 10 }],
    ]);
  });

  it("satisfies the SDK's own stream accumulator", async () => {
    fake.script({ text: "final words", toolCalls: [{ id: "call_x", name: "bash", arguments: { command: "pwd" } }] });
    const runner = client.chat.completions.stream({
      model: "fake-model",
      messages: [{ role: "user", content: "go" }],
    });
    const completion = await runner.finalChatCompletion();
    const message = completion.choices[0].message;

    expect(message.content).toBe("final words");
    expect(message.tool_calls).toMatchObject([
      { id: "call_x", type: "function", function: { name: "bash", arguments: '{"command":"pwd"}' } },
    ]);
  });

  it("parses non-streaming completions and surfaces 429 as an APIError", async () => {
    fake.script({ text: "whole" }, { status: 429, headers: { "retry-after": "2" } });

    const completion = await client.chat.completions.create({
      model: "fake-model",
      messages: [{ role: "user", content: "x" }],
    });
    expect(completion.choices[0].message.content).toBe("whole");

    const error = await client.chat.completions
      .create({ model: "fake-model", messages: [{ role: "user", content: "x" }], stream: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get("retry-after")).toBe("2");
  });

  it("rejects the iteration when the stream is cut", async () => {
    fake.script({ cut: true, afterText: "half" });
    const stream = await client.chat.completions.create({
      model: "fake-model",
      messages: [{ role: "user", content: "x" }],
      stream: true,
    });
    let content = "";
    const iterate = async () => {
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? "";
    };
    await expect(iterate()).rejects.toThrow();
    expect(content).toBe("half");
  });

  it("lists models", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["fake-model"]);
  });
});

describe("fake LLM CLI", () => {
  it("prints its URL, serves requests and exits on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "tests/fake-llm/cli.ts", "--models", "m1,m2"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const lines = createInterface({ input: child.stdout });
      const [line] = (await once(lines, "line")) as [string];
      const match = /^fake-llm ready: (http:\/\/127\.0\.0\.1:\d+\/v1)$/.exec(line);
      expect(match).not.toBeNull();

      const models = await (await fetch(`${match![1]}/models`)).json();
      expect(models.data.map((m: { id: string }) => m.id)).toEqual(["m1", "m2"]);

      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});
