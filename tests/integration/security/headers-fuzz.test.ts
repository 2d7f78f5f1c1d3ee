import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { io } from "socket.io-client";
import { startTestBridge, TEST_TOKEN, type TestBridge } from "../helpers";
import { apiRoutes, probe } from "./probe";
import { rng } from "../../support/rng";

/**
 * Hostile headers and cookies, the way fuzz.test.ts does bodies: a malformed auth cookie
 * is a 401 (HTTP) or a connect_error (socket.io), never a 500 or a hang, and random
 * Cookie/Authorization/Host/Origin/Content-Type values at every route get a clear answer.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 19);
const ROUNDS_PER_ROUTE = Number(process.env.FUZZ_ROUNDS ?? 20);

let bridge: TestBridge;
let sessionId: string;
const internalErrors: string[] = [];

beforeAll(async () => {
  // Unknown errors (and, from server/process-errors.ts, unhandled rejections) are logged: none may happen here.
  vi.spyOn(console, "error").mockImplementation(
    (...args: unknown[]) => void internalErrors.push(args.map(String).join(" ")),
  );
  bridge = await startTestBridge();
  const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
  sessionId = ((await created.json()) as { id: string }).id;
});

afterAll(async () => {
  await bridge.stop();
  vi.restoreAllMocks();
});

/** Values a hand-made request can carry in a header (Node's client refuses CR, LF and NUL). */
function nastyValues(port: number): string[] {
  return [
    "",
    " ",
    "%E0%A4%A",
    "%",
    "%%%",
    "=",
    ";;;",
    "a=b; a=c",
    `worldline_token_${port}=%E0%A4%A`,
    `worldline_token_${port}=%E0%A4%A; worldline_share_${port}=%ZZ`,
    `worldline_token_${port}="${TEST_TOKEN}`,
    `worldline_token_${port}=${TEST_TOKEN.slice(0, -1)}`,
    `worldline_share_${port}=%E0%A4%A`,
    `worldline_share_${port}=${"s".repeat(4000)}`,
    "__proto__=1; constructor=2; toString=3",
    "Bearer ",
    "Bearer %E0%A4%A",
    `Bearer ${TEST_TOKEN} extra`,
    "Basic Zm9vOmJhcg==",
    "\u00ff\u00fe",
    "null",
    "http://evil.example",
    "127.0.0.1",
    `127.0.0.1:${port}`,
    `localhost:${port}@evil`,
    "application/json; charset=%E0%A4%A",
    "text/event-stream",
    "x".repeat(6000),
  ];
}

describe("malformed auth cookie", () => {
  it("answers HTTP with 401 and an error object, not 500", async () => {
    const result = await probe(bridge.port, {
      path: "/api/v1/sessions",
      headers: { host: `127.0.0.1:${bridge.port}`, cookie: `worldline_token_${bridge.port}=%E0%A4%A` },
    });
    expect(result.status).toBe(401);
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  });

  it("gives socket.io a connect_error, not a hang", async () => {
    const socket = io(bridge.url, {
      transports: ["websocket"],
      forceNew: true,
      reconnection: false,
      extraHeaders: { cookie: `worldline_token_${bridge.port}=%E0%A4%A` },
    });
    try {
      const outcome = await new Promise<string>((resolve) => {
        socket.once("connect", () => resolve("connect"));
        socket.once("connect_error", (error) => resolve(`connect_error: ${error.message}`));
        setTimeout(() => resolve("neither connect nor connect_error in 5 s"), 5_000);
      });
      expect(outcome).toMatch(/^connect_error: unauthorized/);
    } finally {
      socket.disconnect();
    }
  });
});

describe("header fuzzing", () => {
  it("answers random Cookie, Authorization, Host, Origin and Content-Type at every route with no 5xx", async () => {
    const random = rng(SEED);
    const values = nastyValues(bridge.port);
    const pick = () => values[Math.floor(random() * values.length)];
    const failures: string[] = [];
    let probes = 0;
    for (const route of apiRoutes({ id: sessionId, session_id: sessionId })) {
      for (let round = 0; round < ROUNDS_PER_ROUTE; round++) {
        const headers: Record<string, string> = { host: `127.0.0.1:${bridge.port}` };
        if (random() < 0.8) headers.cookie = pick();
        if (random() < 0.5) headers.authorization = random() < 0.3 ? `Bearer ${TEST_TOKEN}` : pick();
        if (random() < 0.2) headers.host = pick();
        if (random() < 0.3) headers.origin = pick();
        if (random() < 0.3) headers["content-type"] = pick();
        if (random() < 0.2) headers.accept = pick();
        if (random() < 0.2) headers["x-forwarded-for"] = pick();
        const body = route.method === "GET" ? undefined : random() < 0.5 ? "{}" : pick();
        probes += 1;
        const result = await probe(bridge.port, { method: route.method, path: route.path, headers, body });
        if (!clearAnswer(result)) {
          failures.push(`${route.method} ${route.path} ${JSON.stringify(headers).slice(0, 300)} → ${result.status}`);
        }
      }
    }
    expect(probes).toBeGreaterThan(100);
    expect(failures).toEqual([]);
    expect((await bridge.api("/api/v1/health")).status).toBe(200);
  }, 300_000);

  it("answers request targets that are not paths of its own with 400, not 500", async () => {
    const headers = { host: `127.0.0.1:${bridge.port}`, authorization: `Bearer ${TEST_TOKEN}` };
    for (const path of ["//", "//evil.example/api/v1/sessions", "/\\evil.example/", "http://evil.example/", "*"]) {
      const result = await probe(bridge.port, { path, headers });
      expect({ path, status: result.status, code: JSON.parse(result.body).error.code }).toEqual({
        path,
        status: 400,
        code: "request:invalid",
      });
    }
  });

  it("logged no internal error or unhandled rejection", () => {
    expect(internalErrors).toEqual([]);
  });
});

/** 2xx, a streamed 200, a 4xx with `{error:{code,message}}`, or Node's own 400/431 for a header it refuses. */
function clearAnswer(result: { status: number; body: string; headers: Record<string, unknown> }): boolean {
  if (result.status >= 200 && result.status < 300) return true;
  if (result.status === 400 || result.status === 431) {
    if (result.body === "") return true;
  }
  if (result.status < 400 || result.status >= 500) return false;
  try {
    const parsed = JSON.parse(result.body) as { error?: { code?: unknown; message?: unknown } };
    return typeof parsed.error?.code === "string" && typeof parsed.error.message === "string";
  } catch {
    return false;
  }
}
