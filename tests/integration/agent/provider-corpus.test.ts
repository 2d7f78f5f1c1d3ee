import fs from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript, type EventEnvelope } from "../../../server/protocol";
import { TEST_POSTGRES } from "../../db";
import { loadCorpus, startReplayLlm, streamBody, type CorpusStream, type ReplayLlm } from "../../support/replay-llm";
import { messagesOf, startAgentBridge, type AgentBridge } from "./harness";

// Every recorded provider stream in tests/fixtures/providers/ is replayed over real HTTP to a
// real bridge, and what the user sees (transcript, tool cards, done event, session usage) is checked
// against what the recording says (corpus.json `expect`, computed by an independent reader).

const corpus = loadCorpus();
/**
 * On PostgreSQL (the second pass, package.json's test:integration:postgres) one stream per shape
 * (corpus.json `kinds`) is enough: what reaches the store is the same transcript, usage and stop
 * reason whatever the provider, and every stream runs on SQLite in the first pass.
 */
const replayed = TEST_POSTGRES ? onePerKind(corpus) : corpus;

/** The fewest streams that still show every kind, picked greedily in corpus order. */
function onePerKind(streams: CorpusStream[]): CorpusStream[] {
  const missing = new Set(streams.flatMap((stream) => stream.kinds));
  const picked: CorpusStream[] = [];
  while (missing.size > 0) {
    let best = streams[0];
    let gain = 0;
    for (const stream of streams) {
      const covers = stream.kinds.filter((kind) => missing.has(kind)).length;
      if (covers > gain) [best, gain] = [stream, covers];
    }
    picked.push(best);
    for (const kind of best.kinds) missing.delete(kind);
  }
  return picked;
}
/** Every later request of a turn (after tool calls, or the continuation of a cut-off answer) gets this recording. */
const CLOSING = corpus.find((stream) => stream.id === "mistral-text")!;

let llm: ReplayLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  llm = await startReplayLlm({ body: streamBody(CLOSING.id) });
  bridge = await startAgentBridge(llm.url);
});
afterAll(async () => {
  await bridge.close();
  await llm.close();
});
afterEach(() => llm.reset());

type Sse = { event: string; data: Record<string, unknown> }[];

/** What the user saw of one turn, in the terms corpus.json uses. */
function observe(sse: Sse, events: EventEnvelope[]) {
  const transcript = applyEvents(emptyTranscript(), events);
  const done = sse.find((event) => event.event === "done")?.data;
  const messages = transcript.items.flatMap((item) =>
    item.kind === "assistant" ? [{ text: item.text.trim(), reasoning: item.reasoning.trim() }] : [],
  );
  const tools = transcript.items.flatMap((item) =>
    item.kind === "tool" ? [{ id: item.id, name: item.name, arguments: item.args, state: item.state }] : [],
  );
  const notices = transcript.items.flatMap((item) => (item.kind === "notice" ? [`${item.level}: ${item.text}`] : []));
  const retries = transcript.items.filter((item) => item.kind === "retry").length;
  return {
    messages,
    tools,
    notices,
    retries,
    requests: llm.requests.length,
    outcome: done?.outcome,
    stop_reason: done?.stop_reason,
    stats: done?.generation_stats as Record<string, number | null> | null | undefined,
  };
}

/** How the turn must go for a stream that ends the way `expect.stop` says (see server/agent/provider/README.md). */
function expectedTurn(stream: CorpusStream) {
  const e = stream.expect;
  const ranTools = e.stop === "completed" && e.tool_calls.length > 0;
  const continued = e.stop === "truncated" && e.text !== "" && e.tool_calls.length === 0;
  const requests = ranTools || continued ? 2 : 1;
  const closing = CLOSING.expect;
  const steps = requests === 2 ? [e, closing] : [e];
  const answer = e.text || e.refusal;
  const messages = [
    ...(answer || e.reasoning ? [{ text: answer, reasoning: e.reasoning }] : []),
    ...(requests === 2 ? [{ text: closing.text, reasoning: closing.reasoning }] : []),
  ];
  const sum = (pick: (u: NonNullable<typeof e.usage>) => number | null) => {
    const known = steps.flatMap((step) => (step.usage && pick(step.usage) !== null ? [pick(step.usage)!] : []));
    return known.length ? known.reduce((a, b) => a + b, 0) : null;
  };
  return {
    requests,
    messages,
    stop_reason: requests === 2 ? "completed" : e.stop,
    input_tokens: sum((u) => u.input),
    cached_input_tokens: sum((u) => u.cached),
    reasoning_tokens: sum((u) => u.reasoning),
    output_tokens: steps.every((step) => step.usage) ? sum((u) => u.output) : null,
  };
}

const NOTICE: Record<string, RegExp> = {
  truncated: /cut off|output.token limit/i,
  refused: /refused/i,
  content_filter: /content filter/i,
  error: /.+/,
};

const observed: Record<string, unknown> = {};
afterAll(() => {
  if (process.env.CORPUS_OBSERVE) fs.writeFileSync(process.env.CORPUS_OBSERVE, JSON.stringify(observed, null, 1));
});

describe("recorded provider streams", () => {
  it("cover at least 40 streams from at least 10 providers, each with its source", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    expect(new Set(corpus.map((stream) => stream.provider.split(" (")[0])).size).toBeGreaterThanOrEqual(10);
    for (const stream of corpus) expect(stream.source.url).toMatch(/^https:\/\/github\.com\/.+\/blob\/[0-9a-f]{40}\//);
  });

  it("the PostgreSQL pass replays every kind of stream at least once", () => {
    expect(new Set(replayed.flatMap((stream) => stream.kinds))).toEqual(new Set(corpus.flatMap((s) => s.kinds)));
  });

  it.each(replayed.map((stream) => [stream.id, stream] as const))("%s", async (_id, stream) => {
    const sessionId = await bridge.createSession();
    llm.script({ body: streamBody(stream.id) }, { body: streamBody(CLOSING.id) }, { body: streamBody(CLOSING.id) });
    const sse = await bridge.chat(sessionId, `replay ${stream.id}`);
    const seen = observe(sse, await bridge.events(sessionId));
    observed[stream.id] = seen;
    const want = expectedTurn(stream);

    expect(seen.requests).toBe(want.requests);
    expect(seen.messages).toEqual(want.messages);
    expect(seen.stop_reason).toBe(want.stop_reason);
    expect(seen.outcome).toBe(want.stop_reason === "error" ? "error" : "completed");
    expect(seen.retries).toBe(0);

    // Tool calls: a card per call with the recorded id, name and parsed arguments; when the stream
    // ended in tool calls they ran, and the next request carries the calls and one result each.
    const calls = stream.expect.stop === "completed" ? stream.expect.tool_calls : [];
    expect(seen.tools.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(
      calls.map(({ name, arguments: args }) => ({ name, arguments: args })),
    );
    for (const [i, call] of calls.entries()) if (call.id) expect(seen.tools[i].id).toBe(call.id);
    if (calls.length) {
      const history = messagesOf(llm.requests[1]);
      const assistant = history.find((message) => message.role === "assistant") as {
        tool_calls: { id: string; function: { name: string; arguments: string } }[];
      };
      expect(
        assistant.tool_calls.map((call) => [call.id, call.function.name, JSON.parse(call.function.arguments)]),
      ).toEqual(seen.tools.map((tool) => [tool.id, tool.name, tool.arguments]));
      const results = history.filter((message) => message.role === "tool").map((message) => message.tool_call_id);
      expect(results).toEqual(seen.tools.map((tool) => tool.id));
    }

    // Notices: the stop reason in words, and for an error the provider's own message.
    const stop = stream.expect.stop;
    if (stop in NOTICE) expect(seen.notices.some((notice) => NOTICE[stop].test(notice))).toBe(true);
    else expect(seen.notices).toEqual([]);
    if (stream.expect.error) expect(seen.notices.join("\n")).toContain(stream.expect.error.slice(0, 60));
    for (const notice of seen.notices) expect(notice).not.toMatch(/\[object Object\]|HTTP \?/);

    // Usage over the turn's billed requests, as the done event and the session report it.
    expect(seen.stats).toMatchObject({
      input_tokens: want.input_tokens,
      cached_input_tokens: want.cached_input_tokens,
      reasoning_tokens: want.reasoning_tokens,
    });
    if (want.output_tokens !== null) expect(seen.stats!.output_tokens).toBe(want.output_tokens);
    const session = (await (await bridge.api(`/api/v1/sessions/${sessionId}`)).json()) as Record<string, unknown>;
    expect(session.stop_reason).toBe(want.stop_reason);
  });
});
