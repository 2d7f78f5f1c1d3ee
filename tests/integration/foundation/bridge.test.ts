import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainText } from "../../support/model-text";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { emitCommand, readSse, startTestBridge, uniqueId, waitFor, type TestBridge } from "../helpers";

let fake: FakeLlm;
let bridge: TestBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startTestBridge({ llmUrl: fake.url });
});

afterAll(async () => {
  await bridge?.stop();
  await fake?.close();
});

async function newSession(): Promise<string> {
  const response = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

describe("HTTP API", () => {
  it("answers health without a token", async () => {
    const response = await fetch(`${bridge.url}/api/v1/health`);
    expect(await response.json()).toEqual({
      ok: true,
      version: expect.any(String),
      errors: { unhandled_rejections: expect.any(Number), uncaught_exceptions: expect.any(Number) },
      // WORLDLINE_MAX_TURNS unset: the default capacity.
      turns: { running: 0, capacity: 8 },
      store: { fault: null },
    });
  });

  it("refuses requests without the token, with a foreign Host, or a foreign Origin", async () => {
    expect((await fetch(`${bridge.url}/api/v1/sessions`)).status).toBe(401);
    expect((await bridge.api("/api/v1/sessions", { headers: { authorization: "Bearer nope" } })).status).toBe(401);
    const foreignHost = await new Promise<number>((resolve, reject) => {
      // fetch() won't let a test set Host, so use node:http directly.
      import("node:http").then(({ request }) => {
        const req = request(
          `${bridge.url}/api/v1/health`,
          { headers: { host: `attacker.example:${bridge.port}` } },
          (res) => resolve(res.statusCode ?? 0),
        );
        req.on("error", reject);
        req.end();
      });
    });
    expect(foreignHost).toBe(403);
    const crossOrigin = await bridge.api("/api/v1/sessions", {
      body: { workspace: bridge.workspace },
      headers: { origin: "http://attacker.example" },
    });
    expect(crossOrigin.status).toBe(403);
  });

  it("rejects bad bodies with a 4xx error object and writes nothing", async () => {
    const before = (await (await bridge.api("/api/v1/sessions")).json()) as unknown[];
    const cases: [unknown, number, string][] = [
      ["{not json", 400, "request:invalid_json"],
      [{ workspace: "/definitely/not/here" }, 400, "workspace:invalid"],
      [{ workspace: `${bridge.workspace}/file.txt` }, 400, "workspace:invalid"],
      [{ workspace: bridge.workspace, unknown: 1 }, 400, "request:invalid"],
      [{ workspace: 42 }, 400, "request:invalid"],
    ];
    await import("node:fs/promises").then((fs) => fs.writeFile(`${bridge.workspace}/file.txt`, "x"));
    for (const [body, status, code] of cases) {
      const response = await bridge.api("/api/v1/sessions", { body });
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    const wrongType = await bridge.api("/api/v1/sessions", {
      body: "workspace=/tmp",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(wrongType.status).toBe(415);
    const after = (await (await bridge.api("/api/v1/sessions")).json()) as unknown[];
    expect(after.length).toBe(before.length);
  });

  it("streams a chat turn over SSE with runtime_status, deltas and done", async () => {
    fake.script({
      reasoning: "Let me think.",
      text: "Hello from the fake model.",
      usage: { prompt_tokens: 10, completion_tokens: 6 },
    });
    const response = await bridge.api("/api/v1/chat/stream", {
      body: { message: "Say hello", workspace: bridge.workspace },
    });
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    const events = await readSse(response);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("runtime_status");
    expect(names).toContain("reasoning_delta");
    expect(names.at(-1)).toBe("done");
    const text = events
      .filter((e) => e.event === "content_delta")
      .map((e) => e.data.delta)
      .join("");
    expect(text).toBe("Hello from the fake model.");
    const taskId = events[0].data.task_id;
    expect(events.every((e) => e.data.task_id === taskId)).toBe(true);
    const done = events.at(-1)!.data as { session_id: string; generation_stats: { output_tokens: number } };
    expect(done.generation_stats.output_tokens).toBe(6);

    const log = (await (await bridge.api(`/api/v1/sessions/${done.session_id}/events?after=0`)).json()) as {
      seq: number;
      type: string;
    }[];
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    expect(log.map((e) => e.type)).toContain("turn.completed");
    const users = (fake.requests.at(-1)!.body.messages as { role: string; content: string }[]).filter(
      (m) => m.role === "user",
    );
    expect(users.map((m) => plainText(m.content))).toEqual(["Say hello"]);
  });

  it("reports a provider 401 as an error event and keeps serving", async () => {
    fake.script({ status: 401, body: { error: { message: "Invalid API key provided" } } });
    const response = await bridge.api("/api/v1/chat/stream", { body: { message: "hi", workspace: bridge.workspace } });
    const events = await readSse(response);
    const error = events.find((e) => e.event === "error");
    expect(error?.data.message).toMatch(/401.*Invalid API key/);
    expect(events.at(-1)?.event).toBe("done");
    expect((await bridge.api("/api/v1/health")).status).toBe(200);
  });

  it("returns events after a given seq only", async () => {
    const id = await newSession();
    const all = (await (await bridge.api(`/api/v1/sessions/${id}/events`)).json()) as { seq: number }[];
    expect(all.length).toBeGreaterThan(0);
    const tail = (await (await bridge.api(`/api/v1/sessions/${id}/events?after=${all.length}`)).json()) as unknown[];
    expect(tail).toEqual([]);
    expect((await bridge.api(`/api/v1/sessions/${id}/events?after=-1`)).status).toBe(400);
    expect((await bridge.api(`/api/v1/sessions/nope/events`)).status).toBe(404);
  });
});

describe("socket.io", () => {
  it("refuses a handshake without the token", async () => {
    const { io } = await import("socket.io-client");
    const socket = io(bridge.url, { transports: ["websocket"], forceNew: true, auth: { token: "wrong" } });
    const error = await new Promise<Error>((resolve) => socket.once("connect_error", resolve));
    socket.disconnect();
    expect(error.message).toMatch(/unauthorized/);
  });

  it("refuses a websocket upgrade from a foreign Origin", async () => {
    const { io } = await import("socket.io-client");
    const socket = io(bridge.url, {
      transports: ["websocket"],
      forceNew: true,
      auth: { token: bridge.token },
      extraHeaders: { origin: "http://attacker.example" },
    });
    const error = await new Promise<Error>((resolve) => socket.once("connect_error", resolve));
    socket.disconnect();
    expect(error).toBeInstanceOf(Error);
  });

  it("streams a prompt's events live to two subscribed clients identically", async () => {
    const id = await newSession();
    const [a, b] = [await bridge.socket(), await bridge.socket()];
    const received: Record<string, number[]> = { a: [], b: [] };
    a.on("session.events", (m: { events: { seq: number }[] }) => received.a.push(...m.events.map((e) => e.seq)));
    b.on("session.events", (m: { events: { seq: number }[] }) => received.b.push(...m.events.map((e) => e.seq)));
    const first = await emitCommand<{ lastSeq: number; events: { seq: number }[] }>(a, "session.subscribe", {
      sessionId: id,
    });
    await emitCommand(b, "session.subscribe", { sessionId: id, afterSeq: 0 });
    fake.script({ text: "streamed words for two tabs", chunkSize: 3, delayMs: 5 });
    const { turnId } = await emitCommand<{ turnId: string }>(a, "turn.prompt", {
      commandId: uniqueId(),
      sessionId: id,
      text: "go",
    });
    expect(turnId).toBeTruthy();
    const all = await waitFor(async () => {
      const log = (await (await bridge.api(`/api/v1/sessions/${id}/events`)).json()) as { seq: number; type: string }[];
      return log.some((e) => e.type === "turn.completed") ? log : undefined;
    });
    await waitFor(
      () => received.a.at(-1) === all.at(-1)!.seq && received.b.at(-1) === all.at(-1)!.seq,
      5_000,
      "live events",
    );
    const expected = all.map((e) => e.seq).filter((seq) => seq > first.lastSeq);
    expect(received.a).toEqual(expected);
    expect(received.b).toEqual(expected);
  });

  it("answers a replayed command with its first result instead of acting twice", async () => {
    const id = await newSession();
    const socket = await bridge.socket();
    fake.script({ text: "once", delayMs: 20 });
    const commandId = uniqueId();
    const first = await emitCommand<{ turnId: string }>(socket, "turn.prompt", {
      commandId,
      sessionId: id,
      text: "only once",
    });
    const replay = await emitCommand<{ turnId: string }>(socket, "turn.prompt", {
      commandId,
      sessionId: id,
      text: "only once",
    });
    expect(replay.turnId).toBe(first.turnId);
  });

  it("answers malformed payloads with a clear error and stays up", async () => {
    const socket = await bridge.socket();
    for (const payload of [
      null,
      42,
      "x",
      { sessionId: 1 },
      { commandId: "short", sessionId: "s", text: "" },
      { evil: true },
    ]) {
      const ack = (await socket.timeout(5_000).emitWithAck("turn.prompt", payload)) as {
        ok: boolean;
        error?: { code: string };
      };
      expect(ack.ok).toBe(false);
      expect(ack.error?.code).toBe("request:invalid");
    }
    expect((await bridge.api("/api/v1/health")).status).toBe(200);
  });
});
