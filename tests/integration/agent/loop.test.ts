import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { completedOutcomes, messagesOf, startAgentBridge, type AgentBridge } from "./harness";

let fake: FakeLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url);
  await fs.writeFile(path.join(bridge.workspace, "a.txt"), "alpha\n");
  await fs.writeFile(path.join(bridge.workspace, "b.txt"), "beta\n");
});
afterAll(async () => {
  await bridge.close();
  await fake.close();
});
afterEach(() => fake.reset());

describe("agent loop over real HTTP", () => {
  it("runs multi-step tool use end to end over /chat/stream", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] }, { text: "The file says alpha." });
    const sse = await bridge.chat(sessionId, "What is in a.txt?");
    const names = sse.map((e) => e.event);
    expect(names).toContain("tool_call_started");
    expect(names).toContain("tool_call_finished");
    expect(
      sse
        .filter((e) => e.event === "content_delta")
        .map((e) => e.data.delta)
        .join(""),
    ).toBe("The file says alpha.");
    expect(names.at(-1)).toBe("done");
    const second = messagesOf(fake.requests[1]);
    expect(second.find((m) => m.role === "tool")?.content).toContain("alpha");
    expect(fake.requests[0].body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(
      expect.arrayContaining(["read_file", "shell", "todo", "task", "send_dmail"]),
    );
  });

  it("runs two tool calls of one response and gives both results to the model, in call order", async () => {
    const sessionId = await bridge.createSession();
    fake.script(
      {
        toolCalls: [
          { name: "read_file", arguments: { path: "a.txt" } },
          { name: "read_file", arguments: { path: "b.txt" } },
        ],
      },
      { text: "done" },
    );
    await bridge.chat(sessionId, "read both");
    const messages = messagesOf(fake.requests[1]);
    const assistant = messages.find((m) => m.role === "assistant" && m.tool_calls);
    const ids = (assistant?.tool_calls as { id: string }[]).map((c) => c.id);
    const tools = messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => m.tool_call_id)).toEqual(ids);
    expect(tools[0].content).toContain("alpha");
    expect(tools[1].content).toContain("beta");
  });

  it("runs an identical call twice in one step only once", async () => {
    const sessionId = await bridge.createSession();
    fake.script(
      {
        toolCalls: [
          { name: "read_file", arguments: { path: "a.txt" } },
          { name: "read_file", arguments: { path: "a.txt" } },
        ],
      },
      { text: "ok" },
    );
    await bridge.chat(sessionId, "read twice");
    const tools = messagesOf(fake.requests[1]).filter((m) => m.role === "tool");
    expect(tools).toHaveLength(2);
    expect(tools[1].content).toContain("it ran once");
    const running = (await bridge.events(sessionId)).filter(
      (e) => e.type === "tool.state" && e.payload.state === "running",
    );
    expect(running).toHaveLength(1);
  });

  it("retries a 429 with Retry-After: 1 into a reply, waiting about a second", async () => {
    const sessionId = await bridge.createSession();
    fake.script(
      { status: 429, headers: { "retry-after": "1" }, body: { error: { message: "slow down" } } },
      { text: "finally" },
    );
    const started = Date.now();
    const sse = await bridge.chat(sessionId, "hi");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    const retry = (await bridge.events(sessionId)).find((e) => e.type === "turn.retry");
    expect(retry?.type === "turn.retry" && retry.payload.delayMs).toBe(1000);
    expect(
      sse
        .filter((e) => e.event === "content_delta")
        .map((e) => e.data.delta)
        .join(""),
    ).toBe("finally");
  });

  it("retries a 500, a cut stream and an empty response, each visible as a retry event", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ status: 500 }, { cut: true, afterText: "partial" }, { empty: true }, { text: "recovered" });
    await bridge.chat(sessionId, "hi");
    const events = await bridge.events(sessionId);
    expect(events.filter((e) => e.type === "turn.retry")).toHaveLength(3);
    expect(completedOutcomes(events)).toEqual(["completed"]);
    expect(fake.requests).toHaveLength(4);
  });

  it("does not retry a 401 and reports the provider's message", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ status: 401, body: { error: { message: "Invalid API key xyz" } } });
    const sse = await bridge.chat(sessionId, "hi");
    expect(fake.requests).toHaveLength(1);
    const error = sse.find((e) => e.event === "error");
    expect(String(error?.data.message)).toContain("Invalid API key xyz");
    expect(completedOutcomes(await bridge.events(sessionId))).toEqual(["error"]);
  });

  it("does not retry a 400", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ status: 400, body: { error: { message: "context too long" } } });
    await bridge.chat(sessionId, "hi");
    expect(fake.requests).toHaveLength(1);
  });

  it("writes a checkpoint at the start of the turn and of every step, with markers in the history", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ toolCalls: [{ name: "list_dir", arguments: {} }] }, { text: "listed" });
    await bridge.chat(sessionId, "list");
    const checkpoints = (await bridge.events(sessionId)).flatMap((e) =>
      e.type === "checkpoint.created" ? [e.payload] : [],
    );
    expect(checkpoints.map((c) => [c.number, c.step, c.reason])).toEqual([
      [0, 0, "turn"],
      [1, 1, "step"],
      [2, 2, "step"],
      // The turn's end-of-turn checkpoint is part of the turn: in the log before turn.completed.
      [3, 3, "turn_end"],
    ]);
    // With send_dmail enabled the model sees the markers, inside the messages they follow: the user's
    // message carries the turn's and the first step's, the tool result the second step's.
    const [, user, , tool] = messagesOf(fake.requests[1]);
    expect(user).toMatchObject({
      role: "user",
      content: expect.stringMatching(
        /^<system>CHECKPOINT 0<\/system>\n\nlist\n\n<context>[\s\S]*<\/context>\n\n<system>CHECKPOINT 1<\/system>$/,
      ),
    });
    expect(tool).toMatchObject({ role: "tool", content: expect.stringMatching(/\n\n<system>CHECKPOINT 2<\/system>$/) });
    expect(messagesOf(fake.requests[1]).map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
  });

  it("emits context usage after every step", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "hello", usage: { prompt_tokens: 120, completion_tokens: 5 } });
    await bridge.chat(sessionId, "hi");
    const usage = (await bridge.events(sessionId)).find((e) => e.type === "context.usage");
    expect(usage?.type === "context.usage" && usage.payload).toMatchObject({
      tokens: 125,
      inputTokens: 120,
      outputTokens: 5,
    });
  });
});
