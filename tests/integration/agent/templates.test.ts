import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { promptCacheReuse, renderPrompt, TEMPLATE_MODELS, type RecordedBody } from "../../support/chat-templates";
import { runScriptedSession, type SessionRecording } from "../../support/scripted-session";

// Requests that every chat template accepts, and that a prefix cache can reuse.
// The sessions run against the fake LLM in strict mode, which refuses two consecutive messages of one role.

let fake: FakeLlm;
let coding: SessionRecording;
let chat: SessionRecording;

beforeAll(async () => {
  fake = await startFakeLlm({ strict: true });
  coding = await runScriptedSession({ fake, resets: true });
  fake.reset();
  // A tiny window: compaction (automatic and /compact) really summarises in the conversation without tools.
  chat = await runScriptedSession({ fake, chat: true, env: { WORLDLINE_CONTEXT_WINDOW: "400" } });
}, 120_000);
afterAll(() => fake.close());

const hasToolMessages = (body: RecordedBody) =>
  body.messages.some((message) => message.role === "tool" || Boolean(message.tool_calls?.length));

describe("requests of multi-turn sessions", () => {
  it("ran every turn to completion against a strict server", () => {
    // Tools, parallel tools, steering, a queued prompt, /compact, a D-Mail.
    expect(coding.outcomes.length).toBeGreaterThanOrEqual(16);
    expect(coding.outcomes.every((outcome) => outcome === "completed")).toBe(true);
    // The one failure is the scripted provider 400; the prompt after it still goes through.
    expect(chat.outcomes).toEqual(["completed", "completed", "error", ...Array(5).fill("completed")]);
    // The resets really happened: a D-Mail and compaction summaries reached the model, and the steering.
    const sent = JSON.stringify(coding.requests.filter((request) => request.phase === "resets").map((r) => r.body));
    expect(sent).toContain("You just got a D-Mail from your future self");
    const chatMain = JSON.stringify(chat.requests.filter((r) => r.kind === "main").map((r) => r.body));
    expect(chatMain).toContain("SUMMARY: a refactor");
    expect(chatMain).toContain("Keep it to one sentence");
  });

  it("never have two consecutive messages with the same user, assistant or system role", () => {
    for (const { body } of [...coding.requests, ...chat.requests]) {
      const roles = body.messages.map((message) => message.role);
      for (let i = 1; i < roles.length; i++) {
        if (roles[i] !== "tool") expect(`${roles[i - 1]} ${roles[i]}`).not.toBe(`${roles[i]} ${roles[i]}`);
      }
    }
  });

  it("carry checkpoint ids inside messages, never as messages of their own", () => {
    const marker = /^<system>CHECKPOINT \d+<\/system>$/;
    const all = coding.requests.flatMap(({ body }) => body.messages);
    expect(all.some((message) => marker.test(String(message.content)))).toBe(false);
    expect(all.some((message) => String(message.content).includes("<system>CHECKPOINT"))).toBe(true);
  });

  it.each(TEMPLATE_MODELS)("render through the %s chat template", (model) => {
    const requests = [...coding.requests, ...chat.requests].map(({ body }) => body);
    // Gemma 3's template has no tool support: it gets the conversations without tool messages.
    const renderable = model === "gemma3" ? requests.filter((body) => !hasToolMessages(body)) : requests;
    expect(renderable.length).toBeGreaterThanOrEqual(model === "gemma3" ? 8 : 30);
    for (const body of renderable) expect(() => renderPrompt(model, body)).not.toThrow();
  });
});

describe("prompt cache reuse (Qwen3 template)", () => {
  it("every request starts with the whole previous rendered prompt of the session", () => {
    expect(coding.chain.length).toBeGreaterThanOrEqual(20);
    const figure = promptCacheReuse(coding.chain, "qwen3");
    expect(figure.broken).toEqual([]);
    expect(figure.reuse).toBe(1);
  });

  it("sends the session id as prompt_cache_key", () => {
    const last = fake.requests.at(-1)!;
    expect(last.body.prompt_cache_key).toBe(chat.sessionId);
  });
});
