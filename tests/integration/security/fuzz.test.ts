import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Socket } from "socket.io-client";
import { clientCommands, ptyCommands } from "../../../server/protocol";
import { MAX_PROMPT_MESSAGE_BYTES } from "../../../server/protocol/images";
import { startTestBridge, TEST_TOKEN, type TestBridge } from "../helpers";
import { apiRoutes, probe } from "./probe";
import { rng } from "../../support/rng";

/**
 * Random and malformed payloads at every socket event (from server/protocol) and
 * every HTTP route (from the router's list()): the bridge stays up, and every answer
 * is a clear client error — an `{ok:false, error:{code,message}}` ack or a 4xx
 * `{error:{code,message}}` — never a 500, a hang or a crash.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 12);
const ROUNDS_PER_EVENT = Number(process.env.FUZZ_ROUNDS ?? 60);
const ROUNDS_PER_ROUTE = Number(process.env.FUZZ_ROUNDS ?? 60);

let bridge: TestBridge;
let sessionId: string;
let socket: Socket;
let payloads = 0;
const internalErrors: string[] = [];

beforeAll(async () => {
  // Unknown errors are logged by toWireError; a fuzz run must produce none.
  vi.spyOn(console, "error").mockImplementation(
    (...args: unknown[]) => void internalErrors.push(args.map(String).join(" ")),
  );
  bridge = await startTestBridge();
  const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
  sessionId = ((await created.json()) as { id: string }).id;
  socket = await bridge.socket();
});

afterAll(async () => {
  await bridge.stop();
  vi.restoreAllMocks();
  console.info(`[security/fuzz] payloads fuzzed: ${payloads} (seed ${SEED})`);
});

const NASTY_STRINGS = [
  "",
  " ",
  "\0",
  "a\0b",
  "../../../../etc/passwd",
  "%2e%2e%2f",
  "%E0%A4%A",
  "\u202e\u0000\ud800",
  "💥".repeat(100),
  "<script>alert(1)</script>",
  "'; DROP TABLE Session; --",
  "__proto__",
  "constructor",
  "x".repeat(70_000),
  "${process.exit(1)}",
  "$(touch /tmp/pwned)",
  "\r\n\r\nHTTP/1.1 200 OK",
];

function randomValue(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * 14);
  switch (pick) {
    case 0:
      return null;
    case 1:
      return undefined;
    case 2:
      return random() < 0.5;
    case 3:
      return [0, -1, 1.5, Number.MAX_SAFE_INTEGER, -Number.MAX_VALUE, 1e308, 2 ** 53 + 1][Math.floor(random() * 7)];
    case 4:
    case 5:
      return NASTY_STRINGS[Math.floor(random() * NASTY_STRINGS.length)];
    case 6:
      return Math.random().toString(36).slice(2);
    case 7:
      return depth > 3 ? [] : Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
    case 8:
      return depth > 3
        ? {}
        : Object.fromEntries(
            Array.from({ length: Math.floor(random() * 4) }, (_, i) => [`k${i}`, randomValue(random, depth + 1)]),
          );
    case 9:
      return JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}');
    case 10:
      return nested(200);
    case 11:
      return sessionId;
    case 12:
      return "x".repeat(1 + Math.floor(random() * 300));
    default:
      return Buffer.from([0, 1, 2, 255]);
  }
}

/** encodeURIComponent, except a lone surrogate goes raw (as a hand-made request would send it). */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text.replace(/[^\w]/g, "%25");
  }
}

function nested(depth: number): unknown {
  let value: unknown = "deep";
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

/** A payload shaped like the schema (right keys, wrong or edge values) or entirely random. */
function payloadFor(keys: string[], random: () => number): unknown {
  if (random() < 0.25) return randomValue(random);
  const shaped: Record<string, unknown> = {};
  for (const key of keys) {
    if (random() < 0.2) continue;
    if (key === "sessionId" && random() < 0.6) shaped[key] = random() < 0.7 ? sessionId : "no-such-session";
    else if (key === "commandId" && random() < 0.7) shaped[key] = `cmd-${Math.floor(random() * 1e12)}`;
    else shaped[key] = randomValue(random);
  }
  if (random() < 0.2) shaped[`extra${Math.floor(random() * 9)}`] = randomValue(random);
  return shaped;
}

function schemaKeys(schema: unknown): string[] {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : ["sessionId", "commandId", "text"];
}

async function stillUp(): Promise<void> {
  const health = await fetch(`${bridge.url}/api/v1/health`);
  expect(health.status).toBe(200);
  const sessions = await bridge.api("/api/v1/sessions");
  expect(sessions.status).toBe(200);
}

describe("socket events", () => {
  const events = () => [...Object.keys(clientCommands), ...Object.keys(ptyCommands), "files.watch", "files.unwatch"];

  it("answers every malformed payload of every event with an error ack, never an internal error", async () => {
    const random = rng(SEED);
    const schemas: Record<string, unknown> = { ...clientCommands, ...ptyCommands };
    const failures: string[] = [];
    for (const event of events()) {
      const keys = schemaKeys(schemas[event]);
      for (let round = 0; round < ROUNDS_PER_EVENT; round++) {
        const payload = payloadFor(keys, random);
        payloads += 1;
        const ack = (await socket.timeout(10_000).emitWithAck(event, payload)) as {
          ok: boolean;
          error?: { code?: unknown; message?: unknown };
        };
        const clear =
          ack.ok === true ||
          (typeof ack.error?.code === "string" &&
            typeof ack.error.message === "string" &&
            ack.error.code !== "bridge:internal");
        if (!clear)
          failures.push(`${event} ${JSON.stringify(payload)?.slice(0, 200)} → ${JSON.stringify(ack).slice(0, 300)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(socket.connected).toBe(true);
    await stillUp();
  });

  it("survives emits without an ack callback, unknown events and odd argument lists", async () => {
    const random = rng(SEED + 1);
    for (const event of [...events(), "no.such.event", "__proto__", "constructor", "hasOwnProperty"]) {
      for (let round = 0; round < 5; round++) {
        payloads += 1;
        socket.emit(event, randomValue(random), randomValue(random), randomValue(random));
      }
    }
    // Socket.io handles a socket's packets in order: once this is answered, every emit above was handled.
    const ack = (await socket.timeout(10_000).emitWithAck("session.subscribe", { sessionId, afterSeq: 0 })) as {
      ok: boolean;
    };
    expect(ack.ok).toBe(true);
    expect(socket.connected).toBe(true);
    await stillUp();
  });

  it("drops a socket that sends a frame above the size limit, and only that socket", async () => {
    const flooder = await bridge.socket();
    const disconnected = new Promise<string>((resolve) => flooder.once("disconnect", (reason) => resolve(reason)));
    payloads += 1;
    // The socket's frame limit: a prompt with its images fits (server/transport/socket), a flood doesn't.
    const frameLimit = Math.max(2 * 1024 * 1024, MAX_PROMPT_MESSAGE_BYTES);
    flooder.emit("turn.prompt", { commandId: "cmd-flood-0001", sessionId, text: "x".repeat(frameLimit + 1024) });
    expect(await disconnected).toMatch(/transport/);
    expect(socket.connected).toBe(true);
    await stillUp();
  });

  it("refuses a prompt above the message size limit with a clear error", async () => {
    payloads += 1;
    const ack = (await socket
      .timeout(10_000)
      .emitWithAck("turn.prompt", { commandId: "cmd-big-00001", sessionId, text: "y".repeat(200_001) })) as {
      ok: boolean;
      error?: { code: string };
    };
    expect(ack).toMatchObject({ ok: false, error: { code: "request:invalid" } });
  });
});

describe("HTTP routes", () => {
  it("answers random bodies, queries and params of every route with 2xx or a 4xx error object", async () => {
    const random = rng(SEED + 2);
    const failures: string[] = [];
    const host = `127.0.0.1:${bridge.port}`;
    for (const route of apiRoutes()) {
      for (let round = 0; round < ROUNDS_PER_ROUTE; round++) {
        const paramValue = () =>
          random() < 0.5 ? sessionId : encode(String(randomValue(random))).slice(0, 300) || "x";
        let pathname = route.template.replace(/:([a-zA-Z_]+)/g, () => paramValue());
        if (random() < 0.1)
          pathname = pathname.replace(
            /[^/]+$/,
            ["%E0%A4%A", "%00", "..", "%2e%2e", "%", "a%2Fb"][Math.floor(random() * 6)],
          );
        const query =
          random() < 0.5
            ? `?${["path", "q", "after", "status", "workspace", "limit", "token", "cid"].map((k) => `${k}=${encode(String(randomValue(random))).slice(0, 200)}`).join("&")}`
            : "";
        const bodyKind = random();
        const body =
          route.method === "GET"
            ? undefined
            : bodyKind < 0.15
              ? "{not json"
              : bodyKind < 0.2
                ? ""
                : bodyKind < 0.25
                  ? "[]".repeat(10)
                  : (JSON.stringify(
                      payloadFor(
                        [
                          "workspace",
                          "message",
                          "session_id",
                          "title",
                          "yolo",
                          "decision",
                          "path",
                          "content",
                          "checkpoint",
                          "approval_id",
                          "password",
                          "tool",
                          "pattern",
                          "action",
                          "scope",
                        ],
                        random,
                      ),
                    ) ?? "null");
        payloads += 1;
        const result = await probe(bridge.port, {
          method: route.method,
          path: pathname + query,
          headers: {
            host,
            authorization: `Bearer ${TEST_TOKEN}`,
            "content-type": "application/json",
            accept: "application/json",
          },
          body,
        });
        const isSse = String(result.headers["content-type"] ?? "").startsWith("text/event-stream");
        let clear = result.status >= 200 && result.status < 300;
        if (result.status >= 400 && result.status < 500) {
          try {
            const parsed = JSON.parse(result.body) as { error?: { code?: unknown; message?: unknown } };
            clear = typeof parsed.error?.code === "string" && typeof parsed.error.message === "string";
          } catch {
            clear = false;
          }
        }
        if (isSse && result.status === 200) clear = true;
        if (!clear)
          failures.push(
            `${route.method} ${pathname}${query.slice(0, 80)} ${body?.slice(0, 120)} → ${result.status} ${result.body.slice(0, 200)}`,
          );
      }
    }
    expect(failures).toEqual([]);
    await stillUp();
  }, 300_000);

  it("refuses a body above the size limit with 413", async () => {
    payloads += 1;
    const result = await probe(bridge.port, {
      method: "POST",
      path: "/api/v1/sessions",
      headers: {
        host: `127.0.0.1:${bridge.port}`,
        authorization: `Bearer ${TEST_TOKEN}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ workspace: "x".repeat(2 * 1024 * 1024) }),
    });
    expect(result.status).toBe(413);
    await stillUp();
  });

  it("logged no internal error while fuzzed", () => {
    expect(internalErrors).toEqual([]);
  });
});
