import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";
import { startApiBridge, type ApiBridge } from "../api/support";

type Summary = { id: string; title: string };
type LoggedEvent = { type: string; payload: { title?: string }; turnId?: string };

let fake: FakeLlm;
let bridge: ApiBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startApiBridge(fake);
});
afterAll(async () => {
  await bridge.stop();
  await fake.close();
});
afterEach(() => fake.reset());

async function titleOf(target: TestBridge, sessionId: string): Promise<string> {
  const response = await target.api(`/api/v1/sessions/${sessionId}`);
  return ((await response.json()) as Summary).title;
}

describe("session titles", () => {
  it("names a session after its first prompt by a separate model call, outside the turn's requests, stats and transcript", async () => {
    const sessionId = await bridge.createSession();
    fake.scriptTitle({
      text: 'Title: "Slugify accented titles".',
      usage: { prompt_tokens: 40, completion_tokens: 900 },
    });
    fake.script({ text: "Done.", usage: { prompt_tokens: 10, completion_tokens: 3 } });
    const events = await bridge.chat({ message: "please make slugify keep accented letters", session_id: sessionId });

    await waitFor(async () => (await titleOf(bridge, sessionId)) === "Slugify accented titles", 10_000, "the title");
    // The title call was its own request, marked as such; the turn's one request is all `requests` saw.
    expect(fake.requests).toHaveLength(1);
    expect(fake.titleRequests).toHaveLength(1);
    const titleRequest = fake.titleRequests[0].body;
    expect(titleRequest.tools).toBeUndefined();
    expect(titleRequest.messages.at(-1).content).toBe("please make slugify keep accented letters");
    // Not counted in the turn: the done event's stats are the turn's 3 output tokens, not the title's 900.
    const done = events.find((event) => event.event === "done")!;
    expect((done.data.generation_stats as { output_tokens: number }).output_tokens).toBe(3);
    // Not in the transcript: the title is a session.updated event without a turn, and the history has no trace of it.
    const log = await bridge.json<LoggedEvent[]>(`/api/v1/sessions/${sessionId}/events`);
    const titled = log.filter((event) => event.type === "session.updated" && event.payload.title);
    expect(titled.at(-1)!.payload.title).toBe("Slugify accented titles");
    const conversation = await bridge.json<{ messages: { content: string }[] }>(`/api/v1/conversations/${sessionId}`);
    expect(conversation.messages.map((message) => message.content)).toEqual([
      "please make slugify keep accented letters",
      "Done.",
    ]);
    // Nor in what the model sees next turn.
    fake.script({ text: "Again." });
    await bridge.chat({ message: "and again", session_id: sessionId });
    expect(JSON.stringify(fake.requests[1].body.messages)).not.toContain("Slugify accented titles");
    expect(fake.titleRequests).toHaveLength(1);
  });

  it("falls back to the prompt's first words when the title call fails, and the turn is unaffected", async () => {
    const sessionId = await bridge.createSession();
    fake.scriptTitle({ status: 500, body: { error: { message: "title model down" } } });
    fake.script({ text: "Fine." });
    const events = await bridge.chat({
      message: "add a dark theme to the settings page please",
      session_id: sessionId,
    });
    expect(events.at(-1)!.event).toBe("done");
    await waitFor(async () => (await titleOf(bridge, sessionId)) === "Add a dark theme to the…", 10_000, "fallback");
  });

  it("keeps a title given at creation or by a rename, and names only on the first prompt", async () => {
    const named = (
      await bridge.json<Summary>("/api/v1/sessions", { body: { workspace: bridge.workspace, title: "Mine" } })
    ).id;
    fake.script({ text: "one" });
    await bridge.chat({ message: "first prompt here", session_id: named });
    expect(fake.titleRequests).toHaveLength(0);
    expect(await titleOf(bridge, named)).toBe("Mine");

    const renamed = await bridge.createSession();
    fake.script({ text: "one" }, { text: "two" });
    await bridge.chat({ message: "first prompt here", session_id: renamed });
    await waitFor(async () => (await titleOf(bridge, renamed)) !== "New session", 10_000, "a title");
    await bridge.json(`/api/v1/sessions/${renamed}`, { method: "PATCH", body: { title: "Renamed by me" } });
    await bridge.chat({ message: "second prompt", session_id: renamed });
    expect(fake.titleRequests).toHaveLength(1);
    expect(await titleOf(bridge, renamed)).toBe("Renamed by me");
  });
});

describe("session titles without a model", () => {
  it("uses the prompt's first words", async () => {
    const plain = await startTestBridge();
    try {
      const response = await plain.api("/api/v1/sessions", { body: { workspace: plain.workspace } });
      const { id } = (await response.json()) as Summary;
      await plain.api("/api/v1/chat/stream", { body: { message: "explain the build script", session_id: id } });
      await waitFor(async () => (await titleOf(plain, id)) === "Explain the build script", 10_000, "words title");
    } finally {
      await plain.stop();
    }
  });
});
