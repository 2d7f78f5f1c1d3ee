import { randomBytes } from "node:crypto";
import path from "node:path";
import { io } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../server/config";
import { startBridge } from "../../../server/main";
import { startTestBridge, TEST_TOKEN, type TestBridge } from "../helpers";
import { apiRoutes, probe, probeCount } from "./probe";
import { tableCounts, testDatabaseUrl } from "../../db";

/**
 * The network boundary (SECURITY.md): a Host/Origin/token matrix
 * over every API route, the socket.io handshake and the websocket upgrade; CSRF
 * through forms, beacons and images; no state change on GET; the token never in
 * a URL after the first visit and never logged; LAN binding only when asked.
 */
let bridge: TestBridge;
let sessionId: string;
let host: string;
let csrf: string;
const stderr: string[] = [];

beforeAll(async () => {
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
  for (const method of ["log", "error", "warn", "info"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void stderr.push(args.map(String).join(" ")));
  }
  bridge = await startTestBridge();
  host = `127.0.0.1:${bridge.port}`;
  const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
  sessionId = ((await created.json()) as { id: string }).id;
  csrf = ((await (await bridge.api("/api/v1/csrf")).json()) as { csrf: string }).csrf;
});

afterAll(async () => {
  await bridge.stop();
  vi.restoreAllMocks();
  console.info(`[security/network] probes tried: ${probeCount.value}`);
});

const bearer = () => ({ authorization: `Bearer ${TEST_TOKEN}` });
const cookie = () => ({ cookie: `${bridge.services.auth.cookieName}=${TEST_TOKEN}` });
const routes = () => apiRoutes({ id: sessionId, task_id: "t-x", providerId: "p-x", cid: "c-x" });
const stateChanging = () => routes().filter((route) => route.method !== "GET");
const jsonBody = { "content-type": "application/json" };

describe("Host allowlist (DNS rebinding)", () => {
  const badHosts = () => [
    "evil.example",
    `evil.example:${bridge.port}`,
    `127.0.0.1:${bridge.port + 1}`,
    "127.0.0.1",
    `localhost.evil.example:${bridge.port}`,
    `127.0.0.1.nip.io:${bridge.port}`,
    `127.0.0.1:${bridge.port}.evil.example`,
    `0.0.0.0:${bridge.port}`,
    `[::ffff:127.0.0.1]:${bridge.port}`,
  ];

  it("refuses every route, page and the socket.io handshake under a foreign Host, even with the token", async () => {
    const targets = [
      ...routes().map((r) => ({ method: r.method, path: r.path })),
      { method: "GET", path: "/" },
      { method: "GET", path: `/?token=${TEST_TOKEN}` },
      { method: "GET", path: "/socket.io/?EIO=4&transport=polling" },
    ];
    for (const target of targets) {
      for (const badHost of badHosts()) {
        const result = await probe(bridge.port, {
          method: target.method,
          path: target.path,
          headers: { host: badHost, ...bearer(), ...jsonBody },
          body: target.method === "GET" ? undefined : "{}",
        });
        expect({ ...target, badHost, status: result.status }).toEqual({ ...target, badHost, status: 403 });
        expect(result.headers["set-cookie"]).toBeUndefined();
      }
    }
  });

  it("refuses a websocket upgrade under a foreign Host", async () => {
    for (const badHost of badHosts()) {
      const result = await probe(bridge.port, {
        path: "/socket.io/?EIO=4&transport=websocket",
        headers: { host: badHost, ...upgradeHeaders() },
      });
      expect({ badHost, upgraded: result.upgraded }).toEqual({ badHost, upgraded: false });
    }
  });

  it("accepts the loopback names it was started on", async () => {
    for (const good of [host, `localhost:${bridge.port}`, `LOCALHOST:${bridge.port}`]) {
      const result = await probe(bridge.port, { path: "/api/v1/sessions", headers: { host: good, ...bearer() } });
      expect({ good, status: result.status }).toEqual({ good, status: 200 });
    }
  });
});

describe("Origin allowlist, compared exactly", () => {
  const badOrigins = () => [
    "null",
    "http://evil.example",
    `http://127.0.0.1:${bridge.port}.evil.example`,
    `http://evil.example/http://127.0.0.1:${bridge.port}`,
    `http://sub.127.0.0.1:${bridge.port}`,
    `https://127.0.0.1:${bridge.port}`,
    `http://127.0.0.1:${bridge.port + 1}`,
    `http://127.0.0.1`,
    `ws://127.0.0.1:${bridge.port}`,
    "",
  ];

  it("refuses every state-changing route from a foreign Origin, even with the token", async () => {
    for (const route of stateChanging()) {
      for (const origin of badOrigins()) {
        const result = await probe(bridge.port, {
          method: route.method,
          path: route.path,
          headers: { host, origin, ...bearer(), ...jsonBody },
          body: "{}",
        });
        expect({ route: `${route.method} ${route.template}`, origin, status: result.status }).toEqual({
          route: `${route.method} ${route.template}`,
          origin,
          status: 403,
        });
      }
    }
  });

  it("refuses the socket.io handshake and the websocket upgrade from a foreign Origin", async () => {
    for (const origin of badOrigins()) {
      const polling = await probe(bridge.port, {
        path: "/socket.io/?EIO=4&transport=polling",
        headers: { host, origin, ...bearer() },
      });
      expect({ origin, status: polling.status }).toEqual({ origin, status: 403 });
      const upgrade = await probe(bridge.port, {
        path: "/socket.io/?EIO=4&transport=websocket",
        headers: { host, origin, ...upgradeHeaders() },
      });
      expect({ origin, upgraded: upgrade.upgraded }).toEqual({ origin, upgraded: false });
    }
  });

  it("lets its own origin upgrade, and serves no other upgrade path", async () => {
    const ok = await probe(bridge.port, {
      path: "/socket.io/?EIO=4&transport=websocket",
      headers: { host, origin: `http://${host}`, ...upgradeHeaders() },
    });
    expect(ok.upgraded).toBe(true);
    for (const other of ["/", "/api/v1/sessions", "/ws", "/socket.io.evil/"]) {
      const result = await probe(bridge.port, {
        path: other,
        headers: { host, origin: `http://${host}`, ...bearer(), ...upgradeHeaders() },
      });
      expect({ other, upgraded: result.upgraded }).toEqual({ other, upgraded: false });
    }
  });

  it("never sends CORS grants", async () => {
    for (const route of routes()) {
      const result = await probe(bridge.port, {
        method: "OPTIONS",
        path: route.path,
        headers: { host, origin: "http://evil.example", "access-control-request-method": "POST" },
      });
      expect(result.headers["access-control-allow-origin"]).toBeUndefined();
    }
  });
});

describe("token", () => {
  it("is required on every route but health, and on pages", async () => {
    const variants: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token-0123456789" },
      { authorization: `Bearer ${TEST_TOKEN}x` },
      { authorization: `Bearer ${TEST_TOKEN.slice(0, -1)}` },
      { authorization: `bearer${TEST_TOKEN}` },
      { authorization: `Basic ${Buffer.from(`x:${TEST_TOKEN}`).toString("base64")}` },
      { cookie: `${bridge.services.auth.cookieName}=wrong` },
      { cookie: `worldline_token_${bridge.port + 1}=${TEST_TOKEN}` },
      { "x-worldline-token": TEST_TOKEN },
    ];
    for (const route of routes()) {
      for (const headers of variants) {
        for (const query of ["", `?token=${TEST_TOKEN}`]) {
          const result = await probe(bridge.port, {
            method: route.method,
            path: route.path + query,
            headers: { host, ...headers, ...jsonBody },
            body: route.method === "GET" ? undefined : "{}",
          });
          const expected = route.template === "/api/v1/health" ? 200 : 401;
          expect({
            route: `${route.method} ${route.template}${query ? "?token" : ""}`,
            headers,
            status: result.status,
          }).toEqual({
            route: `${route.method} ${route.template}${query ? "?token" : ""}`,
            headers,
            status: expected,
          });
        }
      }
    }
    expect((await probe(bridge.port, { path: "/", headers: { host } })).status).toBe(401);
  });

  it("is refused on the socket without it, wrong, or in the query; accepted from auth or the cookie", async () => {
    const attempt = (options: Parameters<typeof io>[1]) =>
      new Promise<string>((resolve) => {
        probeCount.value += 1;
        const socket = io(bridge.url, { transports: ["websocket"], forceNew: true, reconnection: false, ...options });
        socket.once("connect", () => (socket.disconnect(), resolve("connected")));
        socket.once("connect_error", (error) => (socket.disconnect(), resolve(`refused: ${error.message}`)));
      });
    expect(await attempt({})).toMatch(/refused/);
    expect(await attempt({ auth: { token: "wrong-token-0123456789" } })).toMatch(/refused/);
    expect(await attempt({ auth: { token: 42 } })).toMatch(/refused/);
    expect(await attempt({ query: { token: TEST_TOKEN } })).toMatch(/refused/);
    expect(await attempt({ auth: { token: TEST_TOKEN } })).toBe("connected");
    expect(await attempt({ extraHeaders: cookie() })).toBe("connected");
    expect(await attempt({ auth: { token: TEST_TOKEN }, extraHeaders: { origin: "http://evil.example" } })).toMatch(
      /refused/,
    );
  });

  it("leaves the URL after the first visit: 302 to the same page without it, an HttpOnly SameSite=Strict cookie, no Referer", async () => {
    const result = await probe(bridge.port, { path: `/s/abc?x=1&token=${TEST_TOKEN}`, headers: { host } });
    expect(result.status).toBe(302);
    expect(result.headers.location).toBe("/s/abc?x=1");
    expect(result.headers["referrer-policy"]).toBe("no-referrer");
    expect(result.headers["cache-control"]).toBe("no-store");
    expect(result.headers["set-cookie"]?.[0]).toMatch(/HttpOnly/);
    expect(result.headers["set-cookie"]?.[0]).toMatch(/SameSite=Strict/);
    const wrong = await probe(bridge.port, { path: "/?token=wrong-token-0123456789", headers: { host } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    // Every answer keeps the Referer off and refuses framing.
    const api = await probe(bridge.port, { path: "/api/v1/sessions", headers: { host, ...bearer() } });
    expect(api.headers["referrer-policy"]).toBe("no-referrer");
    expect(api.headers["x-frame-options"]).toBe("DENY");
  });

  it("compares in constant time (a digest comparison, whatever the candidate's length)", async () => {
    const policy = bridge.services.auth;
    for (const candidate of [
      "",
      "x",
      TEST_TOKEN.slice(0, 5),
      `${TEST_TOKEN}${"y".repeat(1000)}`,
      randomBytes(64).toString("hex"),
    ]) {
      expect(policy.tokenMatches(candidate)).toBe(false);
    }
    expect(policy.tokenMatches(TEST_TOKEN)).toBe(true);
    const source = (await import("node:fs")).readFileSync(
      path.join(import.meta.dirname, "../../../server/transport/auth.ts"),
      "utf8",
    );
    expect(source).toMatch(/timingSafeEqual\(presented, entry\.digest\)/);
  });
});

describe("CSRF: forms, beacons and images can't change state", () => {
  it("refuses cookie-authenticated state changes without the CSRF header (a form or a beacon)", async () => {
    const before = await tableCounts(bridge.home);
    const bodies: [string, string][] = [
      ["application/x-www-form-urlencoded", "workspace=%2Ftmp"],
      [
        "multipart/form-data; boundary=x",
        '--x\r\nContent-Disposition: form-data; name="workspace"\r\n\r\n/tmp\r\n--x--',
      ],
      ["text/plain", '{"workspace":"/tmp"}'],
      ["application/json", '{"workspace":"/tmp"}'],
    ];
    for (const route of stateChanging()) {
      for (const [type, body] of bodies) {
        // No Origin: old browsers and some form posts omit it.
        const result = await probe(bridge.port, {
          method: route.method,
          path: route.path,
          headers: { host, ...cookie(), "content-type": type },
          body,
        });
        // 403 (no CSRF header) or 415 (not JSON): refused before any handler runs.
        expect({
          route: `${route.method} ${route.template}`,
          type,
          refused: [403, 415].includes(result.status),
        }).toEqual({ route: `${route.method} ${route.template}`, type, refused: true });
      }
    }
    await bridge.services.log.flush();
    expect(await tableCounts(bridge.home)).toEqual(before);
  });

  it("only accepts JSON bodies on state changes, even with the token or the CSRF header", async () => {
    for (const route of stateChanging()) {
      for (const headers of [bearer(), { ...cookie(), "x-worldline-csrf": csrf }]) {
        for (const type of [
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/json-evil",
          "text/json",
        ]) {
          const result = await probe(bridge.port, {
            method: route.method,
            path: route.path,
            headers: { host, origin: `http://${host}`, ...headers, "content-type": type },
            body: "{}",
          });
          expect({ route: `${route.method} ${route.template}`, type, status: result.status }).toEqual({
            route: `${route.method} ${route.template}`,
            type,
            status: 415,
          });
        }
      }
    }
  });

  it("accepts a same-origin JSON request signed with the CSRF header", async () => {
    const result = await probe(bridge.port, {
      method: "PATCH",
      path: `/api/v1/sessions/${sessionId}`,
      headers: { host, origin: `http://${host}`, ...cookie(), "x-worldline-csrf": csrf, ...jsonBody },
      body: JSON.stringify({ title: "csrf ok" }),
    });
    expect(result.status).toBe(200);
  });

  it("changes nothing on GET (every GET route, with a valid cookie, as an <img> would)", async () => {
    const snapshot = () => tableCounts(bridge.home);
    await bridge.services.log.flush();
    const before = await snapshot();
    const getRoutes = routes().filter((route) => route.method === "GET");
    for (const route of getRoutes) {
      for (const query of ["", "?path=.&q=a&after=0&status=pending&workspace=.&limit=5"]) {
        await probe(bridge.port, { path: route.path + query, headers: { host, ...cookie() } });
      }
    }
    await bridge.services.log.flush();
    expect(await snapshot()).toEqual(before);
    expect(getRoutes.length).toBeGreaterThan(15);
  });
});

describe("binding", () => {
  it("refuses a non-loopback HOST unless WORLDLINE_ALLOW_LAN=1", () => {
    expect(() => loadConfig({ HOST: "0.0.0.0", WORLDLINE_HOME: bridge.home })).toThrow(/WORLDLINE_ALLOW_LAN/);
    expect(() => loadConfig({ HOST: "192.168.1.10", WORLDLINE_HOME: bridge.home })).toThrow(/WORLDLINE_ALLOW_LAN/);
    expect(loadConfig({ HOST: "0.0.0.0", WORLDLINE_ALLOW_LAN: "1", WORLDLINE_HOME: bridge.home }).allowLan).toBe(true);
  });

  it("with WORLDLINE_ALLOW_LAN=1 warns and still requires the token", async () => {
    const before = stderr.length;
    const lan = await startBridge({
      config: loadConfig({
        PORT: "0",
        HOST: "0.0.0.0",
        WORLDLINE_ALLOW_LAN: "1",
        WORLDLINE_HOME: bridge.home,
        DATABASE_URL: testDatabaseUrl(bridge.home),
        WORLDLINE_TOKEN: "lan-token-0123456789",
      }),
      ui: false,
    });
    try {
      expect(stderr.slice(before).join("")).toMatch(/WARNING: listening on 0\.0\.0\.0/);
      const anonymous = await probe(lan.port, { path: "/api/v1/sessions", headers: { host: `127.0.0.1:${lan.port}` } });
      expect(anonymous.status).toBe(401);
      const authed = await probe(lan.port, {
        path: "/api/v1/sessions",
        headers: { host: `127.0.0.1:${lan.port}`, authorization: "Bearer lan-token-0123456789" },
      });
      expect(authed.status).toBe(200);
      const foreign = await probe(lan.port, {
        path: "/api/v1/sessions",
        headers: { host: `attacker.example:${lan.port}`, authorization: "Bearer lan-token-0123456789" },
      });
      expect(foreign.status).toBe(403);
    } finally {
      await lan.close();
    }
  });

  it("never logged the token", () => {
    const logged = stderr.join("\n");
    expect(logged).not.toContain(TEST_TOKEN);
    expect(logged).not.toContain("lan-token-0123456789");
  });
});

function upgradeHeaders(): Record<string, string> {
  return {
    connection: "Upgrade",
    upgrade: "websocket",
    "sec-websocket-key": randomBytes(16).toString("base64"),
    "sec-websocket-version": "13",
  };
}
