import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript } from "../../../server/protocol";
import { startReplayLlm, streamBody, type ReplayLlm } from "../../support/replay-llm";
import { messagesOf, startAgentBridge, type AgentBridge } from "./harness";

// Shapes no recording in tests/fixtures/providers/ shows, and bad input. Every stream in
// this file is SYNTHESIZED here (written for the test, modelled on what issue threads describe),
// not recorded: they are kept out of the corpus on purpose. Faults applied to recorded streams
// (a cut connection, an HTTP error before one) use the corpus recordings themselves.

const CLOSING = "mistral-text";

let llm: ReplayLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  llm = await startReplayLlm({ body: streamBody(CLOSING) });
  bridge = await startAgentBridge(llm.url);
});
afterAll(async () => {
  await bridge.close();
  await llm.close();
});
afterEach(() => llm.reset());

/** SSE framing of synthesized chunks (objects are JSON-encoded; strings are sent as they are). */
const sse = (...chunks: (object | string)[]) =>
  chunks.map((chunk) => `data: ${typeof chunk === "string" ? chunk : JSON.stringify(chunk)}\n\n`).join("");
const delta = (d: object, finish: string | null = null) => ({
  id: "chatcmpl-synth",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});
const usage = (u: object) => ({ id: "chatcmpl-synth", object: "chat.completion.chunk", choices: [], usage: u });

async function turn(...bodies: string[]) {
  const sessionId = await bridge.createSession();
  llm.script(...bodies.map((body) => ({ body })));
  const events = await bridge.chat(sessionId, "go");
  const transcript = applyEvents(emptyTranscript(), await bridge.events(sessionId));
  const done = events.find((event) => event.event === "done")!.data;
  return {
    sessionId,
    done,
    stats: done.generation_stats as Record<string, number | null>,
    texts: transcript.items.flatMap((item) => (item.kind === "assistant" ? [item.text] : [])),
    tools: transcript.items.flatMap((item) => (item.kind === "tool" ? [item] : [])),
    notices: transcript.items.flatMap((item) => (item.kind === "notice" ? [item.text] : [])),
    retries: transcript.items.filter((item) => item.kind === "retry").length,
  };
}

describe("shapes no recording shows (synthesized)", () => {
  it("a content_filter finish with no text stops with the filter's notice, once, not as 'empty'", async () => {
    const seen = await turn(sse(delta({ role: "assistant", content: "" }), delta({}, "content_filter"), "[DONE]"));
    expect(llm.requests).toHaveLength(1);
    expect(seen.done.stop_reason).toBe("content_filter");
    expect(seen.notices).toEqual(["The provider's content filter stopped the answer."]);
  });

  it("reads Anthropic-style cache_read_input_tokens that gateways pass through", async () => {
    const seen = await turn(
      sse(
        delta({ content: "cached" }, "stop"),
        usage({
          prompt_tokens: 1200,
          completion_tokens: 5,
          total_tokens: 1205,
          cache_read_input_tokens: 1000,
          cache_creation_input_tokens: 150,
        }),
        "[DONE]",
      ),
    );
    expect(seen.stats).toMatchObject({
      input_tokens: 1200,
      cached_input_tokens: 1000,
      cache_write_tokens: 150,
      output_tokens: 5,
    });
  });

  it("adds Anthropic-style input_tokens (which exclude the cache) to the cache reads and writes", async () => {
    const seen = await turn(
      sse(
        delta({ content: "cached" }, "stop"),
        usage({ input_tokens: 50, output_tokens: 7, cache_read_input_tokens: 1000, cache_creation_input_tokens: 150 }),
        "[DONE]",
      ),
    );
    expect(seen.stats).toMatchObject({
      input_tokens: 1200,
      cached_input_tokens: 1000,
      cache_write_tokens: 150,
      output_tokens: 7,
    });
  });

  it("reads cached input reported as usage.cached_tokens (not under prompt_tokens_details)", async () => {
    const seen = await turn(
      sse(
        delta({ content: "cached" }, "stop"),
        usage({ prompt_tokens: 900, completion_tokens: 4, total_tokens: 904, cached_tokens: 640 }),
        "[DONE]",
      ),
    );
    expect(seen.stats).toMatchObject({ input_tokens: 900, cached_input_tokens: 640, output_tokens: 4 });
  });

  it("reads a llama.cpp-style `error:` field mid-stream as the provider's error, with its own words", async () => {
    const body =
      sse(delta({ content: "Partial" })) +
      `error: ${JSON.stringify({ code: 400, message: "the request exceeds the available context size", type: "exceed_context_size_error" })}\n\n`;
    const seen = await turn(body);
    expect(llm.requests).toHaveLength(1);
    expect(seen.done.stop_reason).toBe("error");
    const events = await bridge.events(seen.sessionId);
    const error = events.find((event) => event.type === "turn.error");
    expect(error?.payload).toMatchObject({ message: expect.stringContaining("exceeds the available context size") });
    expect(seen.texts.join("")).toContain("Partial");
  });

  it("two calls at the same index with different ids stay two calls, both run, both in history", async () => {
    const call = (id: string, args: string) => ({
      tool_calls: [{ index: 0, id, type: "function", function: { name: "list_dir", arguments: args } }],
    });
    const seen = await turn(
      sse(delta(call("call_a", '{"path":"."}')), delta(call("call_b", "{}")), delta({}, "tool_calls"), "[DONE]"),
      streamBody(CLOSING),
    );
    expect(seen.tools.map((tool) => [tool.id, tool.name, tool.args, tool.state])).toEqual([
      ["call_a", "list_dir", { path: "." }, "completed"],
      ["call_b", "list_dir", {}, "completed"],
    ]);
    const assistant = messagesOf(llm.requests[1]).find((message) => message.role === "assistant") as {
      tool_calls: { id: string; function: { name: string; arguments: string } }[];
    };
    expect(assistant.tool_calls.map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ["call_a", "list_dir", '{"path":"."}'],
      ["call_b", "list_dir", "{}"],
    ]);
    expect(seen.done.stop_reason).toBe("completed");
  });

  it("a tool call cut off by the output limit never runs; the turn stops with the notice", async () => {
    const seen = await turn(
      sse(
        delta({
          tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "write_file", arguments: "" } }],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"path":"a.txt","content":"hal' } }] }),
        delta({}, "length"),
        usage({ prompt_tokens: 10, completion_tokens: 16, total_tokens: 26 }),
        "[DONE]",
      ),
    );
    expect(llm.requests).toHaveLength(1);
    expect(seen.tools).toEqual([]);
    expect(seen.done.stop_reason).toBe("truncated");
    expect(seen.notices.join("\n")).toContain("the call to write_file was incomplete and was not run");
  });

  it("a call the output limit cut before any of its arguments never runs either", async () => {
    const seen = await turn(
      sse(
        delta({ content: "Writing it." }),
        delta({
          tool_calls: [{ index: 0, id: "call_w", type: "function", function: { name: "write_file", arguments: "" } }],
        }),
        delta({}, "length"),
        "[DONE]",
      ),
    );
    expect(llm.requests).toHaveLength(1);
    expect(seen.tools).toEqual([]);
    expect(seen.done.stop_reason).toBe("truncated");
    expect(seen.notices.join("\n")).toContain("the call to write_file was incomplete and was not run");
  });

  it("a first tool call at index 1 (a gateway passing Bedrock's content-block index) runs", async () => {
    const seen = await turn(
      sse(
        delta({ content: "I'll look." }),
        delta({
          tool_calls: [{ index: 1, id: "toolu_1", type: "function", function: { name: "list_dir", arguments: "" } }],
        }),
        delta({ tool_calls: [{ index: 1, function: { arguments: '{"path":"."}' } }] }),
        delta({}, "tool_calls"),
        "[DONE]",
      ),
      streamBody(CLOSING),
    );
    expect(seen.tools.map((tool) => [tool.id, tool.name, tool.args, tool.state])).toEqual([
      ["toolu_1", "list_dir", { path: "." }, "completed"],
    ]);
    expect(seen.done.stop_reason).toBe("completed");
  });

  it("a stream that ends after its finish reason without [DONE] is complete; its missing usage is null", async () => {
    const seen = await turn(sse(delta({ content: "Done" }), delta({}, "stop")));
    expect(llm.requests).toHaveLength(1);
    expect(seen.texts).toEqual(["Done"]);
    expect(seen.done.stop_reason).toBe("completed");
    expect(seen.stats).toMatchObject({ input_tokens: null, cached_input_tokens: null, cost_usd: null });
  });

  it("a recorded stream whose connection breaks after its finish reason is complete, not retried", async () => {
    const body = streamBody("openai-plain");
    const cutAfter = body.lastIndexOf("data:", body.indexOf('"usage":{'));
    const sessionId = await bridge.createSession();
    llm.script({ body, cutAfter }, { body, cutAfter });
    const events = await bridge.chat(sessionId, "go");
    expect(llm.requests).toHaveLength(1);
    const done = events.find((event) => event.event === "done")!.data;
    expect(done.stop_reason).toBe("completed");
    expect(done.generation_stats).toMatchObject({ input_tokens: null, cost_usd: null });
  });

  it("a text answer cut off by the output limit continues once, then stops with the notice", async () => {
    const cut = sse(delta({ content: "part one" }), delta({}, "length"), "[DONE]");
    const seen = await turn(cut, cut);
    expect(llm.requests).toHaveLength(2);
    expect(messagesOf(llm.requests[1]).at(-1)?.content).toMatch(/cut off at the output-token limit/);
    expect(seen.done.stop_reason).toBe("truncated");
    expect(seen.notices).toEqual([
      "The answer was cut off at the model's output-token limit; asking the model to continue.",
      "The answer was cut off at the model's output-token limit.",
    ]);
  });
});

describe("retry policy", () => {
  it("a cut-off answer's notice counts the attempts it took", async () => {
    const sessionId = await bridge.createSession();
    llm.script(
      { status: 503, json: { error: { message: "overloaded" } } },
      { body: sse(delta({ content: "part one" }), delta({}, "length"), "[DONE]") },
      { body: streamBody(CLOSING) },
    );
    await bridge.chat(sessionId, "go");
    const transcript = applyEvents(emptyTranscript(), await bridge.events(sessionId));
    expect(transcript.items.flatMap((item) => (item.kind === "notice" ? [item.text] : []))).toEqual([
      "The answer was cut off at the model's output-token limit (after 2 attempts); asking the model to continue.",
    ]);
  });

  it("never retries a step whose tool already ran; the call and its result stay in history", async () => {
    const broken = sse(
      delta({ content: "Looking." }),
      delta({
        tool_calls: [
          { index: 0, id: "call_l", type: "function", function: { name: "list_dir", arguments: '{"path":"."}' } },
        ],
      }),
      { error: { message: "upstream overloaded", code: 502 } },
      "[DONE]",
    );
    const seen = await turn(broken, broken);
    expect(llm.requests).toHaveLength(1);
    expect(seen.retries).toBe(0);
    expect(seen.tools.map((tool) => [tool.id, tool.name, tool.state])).toEqual([["call_l", "list_dir", "completed"]]);
    expect(seen.done.stop_reason).toBe("error");
    expect(seen.notices.join("\n")).toContain("Not retried: the call to list_dir had already run.");
    llm.reset();
    await bridge.chat(seen.sessionId, "and?");
    const history = messagesOf(llm.requests[0]);
    expect(history.find((message) => message.role === "assistant")).toMatchObject({
      content: "Looking.",
      tool_calls: [{ id: "call_l", function: { name: "list_dir", arguments: '{"path":"."}' } }],
    });
    expect(history.find((message) => message.role === "tool")?.tool_call_id).toBe("call_l");
  });

  it("retries a 429 and a 5xx, then reads the recorded stream; the transcript counts the attempts", async () => {
    const sessionId = await bridge.createSession();
    llm.script(
      { status: 429, json: { error: { message: "slow down" } }, headers: { "retry-after": "0" } },
      { status: 503, json: { error: { message: "overloaded" } } },
      { body: streamBody(CLOSING) },
    );
    const events = await bridge.chat(sessionId, "go");
    expect(llm.requests).toHaveLength(3);
    expect(events.filter((event) => event.event === "retry")).toHaveLength(2);
    const transcript = applyEvents(emptyTranscript(), await bridge.events(sessionId));
    expect(transcript.items.flatMap((item) => (item.kind === "notice" ? [item.text] : []))).toEqual([
      "The model answered (after 3 attempts).",
    ]);
  });

  it("never retries a 400", async () => {
    const seen = await turn();
    llm.reset();
    const sessionId = seen.sessionId;
    llm.script({ status: 400, json: { error: { message: "bad request" } } });
    const events = await bridge.chat(sessionId, "again");
    expect(llm.requests).toHaveLength(1);
    expect(events.find((event) => event.event === "done")?.data.stop_reason).toBe("error");
  });

  it("retries a transient error chunk before any finish reason and bills both attempts' usage", async () => {
    const broken = sse(
      delta({ content: "Hel" }),
      { error: { message: "upstream overloaded", code: 502 }, usage: { prompt_tokens: 100, completion_tokens: 3 } },
      "[DONE]",
    );
    const fine = sse(
      delta({ content: "Hello" }, "stop"),
      usage({ prompt_tokens: 100, completion_tokens: 2, total_tokens: 102 }),
      "[DONE]",
    );
    const seen = await turn(broken, fine);
    expect(llm.requests).toHaveLength(2);
    expect(seen.retries).toBe(1);
    expect(seen.stats).toMatchObject({ input_tokens: 200, output_tokens: 5 });
    // Rates come from the attempt that streamed; the failed attempt's 3 billed tokens count in the totals only.
    expect(seen.stats.avg_tokens_per_second).toBe(seen.stats.max_tokens_per_second);
    expect(seen.done.stop_reason).toBe("completed");
  });

  it("never retries a stream that ended with a finish reason (a refusal is an answer)", async () => {
    const refusal = streamBody("openai-refusal");
    const seen = await turn(refusal, refusal, refusal);
    expect(llm.requests).toHaveLength(1);
    expect(seen.texts).toEqual(["I'm sorry, I can't assist with that request."]);
    expect(seen.done.stop_reason).toBe("refused");
  });

  it("retries a recorded stream cut mid-way, and keeps what the last attempt streamed when all fail", async () => {
    const body = streamBody("openai-plain");
    const cutAfter = body.indexOf("data:", 2000);
    const sessionId = await bridge.createSession();
    llm.script(...Array.from({ length: 4 }, () => ({ body, cutAfter })));
    const events = await bridge.chat(sessionId, "go");
    expect(llm.requests).toHaveLength(4); // the first attempt and the bridge's 3 retries
    const error = String(events.find((event) => event.event === "error")?.data.message);
    expect(error).toMatch(/stream|socket|terminated|closed/i);
    expect(error).toContain("after 4 attempts");
    expect(error).not.toMatch(/\[object Object\]|HTTP \?/);
    // The partial answer stays in the history the next turn is sent.
    llm.reset();
    await bridge.chat(sessionId, "and?");
    const assistant = messagesOf(llm.requests[0]).find((message) => message.role === "assistant");
    expect(assistant?.content).toMatch(/^I'm unable to/);
  });
});

describe("bad input ends the step with a clear error and loses nothing", () => {
  const badTurn = async (body: string) => {
    const seen = await turn(body, body, body, body);
    expect(llm.requests).toHaveLength(1);
    expect(seen.done.stop_reason).toBe("error");
    expect(seen.texts).toEqual(["kept"]);
    for (const notice of seen.notices) expect(notice).not.toMatch(/\[object Object\]|HTTP \?/);
    return seen.notices.join("\n");
  };

  it("a chunk that is not JSON", async () => {
    expect(await badTurn(sse(delta({ content: "kept" }), "{not json", "[DONE]"))).toContain(
      "a stream chunk that is not JSON: {not json",
    );
  });

  it("a chunk of an unknown shape", async () => {
    expect(await badTurn(sse(delta({ content: "kept" }), { type: "response.created" }, "[DONE]"))).toContain(
      "a stream chunk of an unknown shape",
    );
  });

  it("a tool-call index that jumps to a piece whose opening was lost", async () => {
    const opening = {
      tool_calls: [{ index: 0, id: "call_0", type: "function", function: { name: "list_dir", arguments: "{}" } }],
    };
    const orphan = { tool_calls: [{ index: 5, function: { arguments: '{"path":"."}' } }] };
    expect(await badTurn(sse(delta({ content: "kept" }), delta(opening), delta(orphan), "[DONE]"))).toContain(
      "tool-call index jumped from 0 to 5",
    );
  });

  it("arguments that never become valid JSON: the call never runs", async () => {
    const notices = await badTurn(
      sse(
        delta({ content: "kept" }),
        delta({
          tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "list_dir", arguments: '{"path":' } }],
        }),
        delta({}, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(notices).toContain('call to list_dir has arguments that are not valid JSON: {"path":');
  });
});

describe("Settings", () => {
  it("shows the reasoning and cache forms the provider's last (recorded) response used", async () => {
    const provider = {
      kind: "openai_compatible",
      name: "Replay",
      baseURL: llm.url,
      models: [
        { id: "fake-model", contextWindow: 32_000, capabilities: { tools: true, images: false, thinking: true } },
      ],
    };
    const saved = await bridge.api("/api/v1/settings/providers", provider);
    expect(saved.status).toBe(200);
    const [{ id }] = ((await saved.json()) as { providers: { id: string }[] }).providers;
    const detected = async () => {
      const view = (await (await bridge.api("/api/v1/settings")).json()) as {
        providers: { baseURL: string; detected: { reasoning: string; cache: string } | null }[];
      };
      return view.providers.find((provider) => provider.baseURL === llm.url)?.detected;
    };
    await turn(streamBody("groq-think-inline"));
    expect(await detected()).toMatchObject({ reasoning: "think_tags", cache: "none" });
    await turn(streamBody("deepseek-tool-call"), streamBody(CLOSING));
    // The closing answer (Mistral's) is the last response: no reasoning, no cache field.
    expect(await detected()).toMatchObject({ reasoning: "none", cache: "none" });
    await turn(streamBody("xai-compatible-text"));
    expect(await detected()).toMatchObject({ reasoning: "reasoning_content", cache: "cached_tokens" });
    await turn(streamBody("mistral-magistral-parts"));
    expect(await detected()).toMatchObject({ reasoning: "content_parts" });
    // Saving the provider again answers with them too (they no longer vanish from the page after a save),
    // and the environment's provider (OPENAI_BASE_URL, here the same server) shows its own.
    const again = (await (await bridge.api("/api/v1/settings/providers", { id, ...provider })).json()) as {
      providers: { detected: unknown }[];
      envDetected: unknown;
    };
    expect(again.providers.map((p) => p.detected)).toEqual([expect.objectContaining({ reasoning: "content_parts" })]);
    expect(again.envDetected).toMatchObject({ reasoning: "content_parts", cache: "none" });
  });
});

describe("reasoning in history", () => {
  let keeping: AgentBridge;
  beforeAll(async () => {
    keeping = await startAgentBridge(llm.url, { env: { WORLDLINE_REASONING_HISTORY: "all" } });
  });
  afterAll(() => keeping.close());

  it("goes back in the form it came in when the provider wants it (here: <think> tags, recorded)", async () => {
    const sessionId = await keeping.createSession();
    llm.script({ body: streamBody("groq-think-inline") }, { body: streamBody(CLOSING) });
    await keeping.chat(sessionId, "first");
    await keeping.chat(sessionId, "second");
    const assistant = messagesOf(llm.requests[1]).find((message) => message.role === "assistant") as Record<
      string,
      unknown
    >;
    expect(String(assistant.content)).toMatch(
      /^<think>\n\s*Okay, so I want to make Uruguayan alfajores[\s\S]*<\/think>\n\nTo make/,
    );
    expect(assistant.reasoning_content).toBeUndefined();
    expect(assistant.reasoning_form).toBeUndefined();
  });

  it("keeps the reasoning streamed before an error, with the partial answer", async () => {
    const sessionId = await keeping.createSession();
    llm.script(
      {
        body: sse(
          delta({ reasoning_content: "Thinking it over." }),
          delta({ content: "kept" }),
          { error: { message: "bad request", type: "invalid_request_error" } },
          "[DONE]",
        ),
      },
      { body: streamBody(CLOSING) },
    );
    await keeping.chat(sessionId, "first");
    await keeping.chat(sessionId, "second");
    const assistant = messagesOf(llm.requests[1]).find((message) => message.role === "assistant");
    expect(assistant).toMatchObject({ content: "kept", reasoning_content: "Thinking it over." });
  });
});
