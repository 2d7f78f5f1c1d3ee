import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestBridge, type TestBridge } from "../helpers";
import { builtinTools, sharedTaskRegistry } from "../../../server/tools";
import { SessionPorts, type SessionPort } from "../../../server/protocol";
import { waitFor } from "../../support/wait";
import { freePort } from "../../support/ports";
import { DEV_SERVER, hostRequest, upgradeStatus } from "./support";

let bridge: TestBridge;
let sessionId: string;
let devPort: number;
let pythonPort: number;
let previewHost: string;
let cookie: string;

const html = { accept: "text/html", "sec-fetch-mode": "navigate" };

async function ports(): Promise<SessionPort[]> {
  const response = await bridge.api(`/api/v1/sessions/${sessionId}/ports`);
  expect(response.status).toBe(200);
  return SessionPorts.parse(await response.json());
}

beforeAll(async () => {
  bridge = await startTestBridge();
  const created = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace } });
  sessionId = ((await created.json()) as { id: string }).id;
  devPort = await freePort();
  pythonPort = await freePort();
  previewHost = `p${devPort}-${sessionId}.localhost:${bridge.port}`;
  // The dev server runs in one of the session's terminals, as a person would start it.
  const terminal = await bridge.services.ptys.create(sessionId);
  bridge.services.ptys.get(sessionId, terminal.terminalId).input(null, `node ${DEV_SERVER} ${devPort}\r`);
  // Python's server runs as the agent's background shell task.
  const shell = builtinTools().find((tool) => tool.name === "shell")!;
  const started = await shell.run(
    { command: `python3 -m http.server ${pythonPort} --bind 127.0.0.1`, background: true },
    { cwd: bridge.workspace, sessionId, toolCallId: "call_py", signal: new AbortController().signal, emit: () => {} },
  );
  expect(started.isError).toBe(false);
  await fs.writeFile(path.join(bridge.workspace, "hello.txt"), "hello from python\n");
}, 60_000);

afterAll(async () => {
  await sharedTaskRegistry.stopSession(sessionId);
  await bridge?.stop();
}, 60_000);

describe("ports", () => {
  it("lists the ports the session's terminal and shell task listen on, with pid, command and preview address", async () => {
    const listed = await waitFor(
      async () => {
        const list = await ports();
        return list.some((p) => p.port === devPort) && list.some((p) => p.port === pythonPort) ? list : null;
      },
      20_000,
      "both dev servers to listen",
    );
    const dev = listed.find((p) => p.port === devPort)!;
    expect(dev.command).toContain("dev-server.mjs");
    expect(dev.pid).toBeGreaterThan(1);
    expect(dev.url).toBe(`http://${previewHost}/`);
    expect(listed.find((p) => p.port === pythonPort)!.command).toContain("http.server");
    // The bridge's own port is not the session's.
    expect(listed.some((p) => p.port === bridge.port)).toBe(false);
  });

  it("answers 404 for a session that does not exist", async () => {
    expect((await bridge.api("/api/v1/sessions/nope/ports")).status).toBe(404);
  });

  it("tells a watching socket about a port that opens, within a second", async () => {
    const socket = await bridge.socket();
    const changes: SessionPort[][] = [];
    socket.on("ports.changed", (message: { sessionId: string; ports: SessionPort[] }) => changes.push(message.ports));
    const ack = await socket.emitWithAck("ports.watch", { sessionId });
    expect(ack.ok).toBe(true);
    const extra = await freePort();
    const terminal = await bridge.services.ptys.create(sessionId);
    bridge.services.ptys.get(sessionId, terminal.terminalId).input(null, `node ${DEV_SERVER} ${extra}\r`);
    const listening = await waitFor(
      async () => (await fetch(`http://127.0.0.1:${extra}/small`).catch(() => null))?.ok,
      20_000,
      "the third server",
    );
    expect(listening).toBe(true);
    const seenAt = Date.now();
    await waitFor(() => changes.some((list) => list.some((p) => p.port === extra)), 3_000, "ports.changed");
    expect(Date.now() - seenAt).toBeLessThan(1_000);
    await bridge.services.ptys.close(sessionId, terminal.terminalId);
    await waitFor(() => changes.at(-1)?.every((p) => p.port !== extra), 5_000, "the closed port to leave");
  });
});

describe("preview origin", () => {
  it("sends a page load without the cookie to the IDE, and anything else gets 401", async () => {
    const load = await hostRequest(bridge.port, previewHost, "/some/page?x=1", html);
    expect(load.status).toBe(302);
    const location = new URL(load.headers.location!);
    expect(location.origin).toBe(`http://127.0.0.1:${bridge.port}`);
    expect(location.pathname).toBe(`/api/v1/sessions/${sessionId}/preview/authorize`);
    expect(location.searchParams.get("port")).toBe(String(devPort));
    expect(location.searchParams.get("path")).toBe("/some/page?x=1");
    const script = await hostRequest(bridge.port, previewHost, "/small");
    expect(script.status).toBe(401);
    const post = await hostRequest(bridge.port, previewHost, "/", {}, "POST");
    expect(post.status).toBe(401);
    expect(await upgradeStatus(bridge.port, previewHost, "/echo")).toBe(401);
  });

  it("does not open with the IDE's own credentials: the token is not a preview cookie", async () => {
    const withToken = await hostRequest(bridge.port, previewHost, "/small", {
      authorization: `Bearer ${bridge.token}`,
      cookie: `${bridge.services.auth.cookieName}=${bridge.token}`,
    });
    expect(withToken.status).toBe(401);
  });

  it("refuses the IDE's authorize without sign-in (401)", async () => {
    const response = await fetch(`${bridge.url}/api/v1/sessions/${sessionId}/preview/authorize?port=${devPort}`, {
      redirect: "manual",
    });
    expect(response.status).toBe(401);
  });

  it("signs a browser in through a one-time ticket, then proxies GETs to the dev server", async () => {
    const authorize = await fetch(
      `${bridge.url}/api/v1/sessions/${sessionId}/preview/authorize?port=${devPort}&path=${encodeURIComponent("/hello?x=1")}`,
      { redirect: "manual", headers: { authorization: `Bearer ${bridge.token}` } },
    );
    expect(authorize.status).toBe(302);
    const ticketUrl = new URL(authorize.headers.get("location")!);
    expect(ticketUrl.host).toBe(previewHost);
    const redeemed = await hostRequest(bridge.port, previewHost, ticketUrl.pathname + ticketUrl.search);
    expect(redeemed.status).toBe(302);
    expect(redeemed.headers.location).toBe("/hello?x=1");
    const setCookie = redeemed.headers["set-cookie"]![0];
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).not.toMatch(/Domain=/i);
    cookie = setCookie.split(";")[0];
    // A ticket works once.
    const again = await hostRequest(bridge.port, previewHost, ticketUrl.pathname + ticketUrl.search);
    expect(again.status).toBe(401);

    const page = await hostRequest(bridge.port, previewHost, "/hello?x=1", { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toBe("dev:GET /hello?x=1");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors");
  });

  it("keeps the preview cookie from the dev server and never reaches the IDE's API from a preview host", async () => {
    const headers = await hostRequest(bridge.port, previewHost, "/headers", { cookie: `${cookie}; theirs=1` });
    const seen = JSON.parse(headers.body) as Record<string, string>;
    expect(seen.cookie).toBe("theirs=1");
    const api = await hostRequest(bridge.port, previewHost, "/api/v1/sessions", {
      cookie,
      authorization: `Bearer ${bridge.token}`,
    });
    expect(api.status).toBe(200);
    expect(api.body).toBe("dev:GET /api/v1/sessions");
  });

  it("carries WebSockets: an echo through the proxy", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${bridge.port}/echo`, { headers: { host: previewHost, cookie } });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    const echoed = new Promise<string>((resolve) => ws.once("message", (data) => resolve(String(data))));
    ws.send("ping through the proxy");
    expect(await echoed).toBe("ping through the proxy");
    ws.close();
  });

  it("serves Python's http.server through its own preview origin", async () => {
    const host = `p${pythonPort}-${sessionId}.localhost:${bridge.port}`;
    const grant = bridge.services.previews!.grants.cookieFor({ sessionId, port: pythonPort });
    const file = await hostRequest(bridge.port, host, "/hello.txt", { cookie: `${grant.name}=${grant.value}` });
    expect(file.status).toBe(200);
    expect(file.body).toBe("hello from python\n");
    // The dev server's cookie is for its own host and port only.
    const crossed = await hostRequest(bridge.port, host, "/hello.txt", { cookie });
    expect(crossed.status).toBe(401);
  });

  it("answers bad input: malformed host 400, unknown session 404, a port the session does not own 404", async () => {
    expect((await hostRequest(bridge.port, `nonsense.localhost:${bridge.port}`, "/", html)).status).toBe(400);
    expect((await hostRequest(bridge.port, `p99999-${sessionId}.localhost:${bridge.port}`, "/", html)).status).toBe(
      400,
    );
    const ghost = bridge.services.previews!.grants.cookieFor({ sessionId: "cghost", port: devPort });
    const unknown = await hostRequest(bridge.port, `p${devPort}-cghost.localhost:${bridge.port}`, "/", {
      cookie: `${ghost.name}=${ghost.value}`,
    });
    expect(unknown.status).toBe(404);
    const free = await freePort();
    const notOwned = bridge.services.previews!.grants.cookieFor({ sessionId, port: free });
    const foreign = await hostRequest(bridge.port, `p${free}-${sessionId}.localhost:${bridge.port}`, "/", {
      cookie: `${notOwned.name}=${notOwned.value}`,
    });
    expect(foreign.status).toBe(404);
    // The bridge's own port is not the session's either.
    const own = await bridge.api(`/api/v1/sessions/${sessionId}/preview/authorize?port=${bridge.port}`);
    expect(own.status).toBe(404);
    expect(await upgradeStatus(bridge.port, `bad_host.localhost:${bridge.port}`, "/")).toBe(400);
  });

  it("answers 502 with a short page when the dev server dies before answering, and ends a response cut halfway", async () => {
    const died = await hostRequest(bridge.port, previewHost, "/die", { cookie });
    expect(died.status).toBe(502);
    expect(died.body).toContain("closed the connection");
    const started = Date.now();
    const half = await hostRequest(bridge.port, previewHost, "/half", { cookie }).then(
      (response) => response.body,
      (error: Error) => `error: ${error.message}`,
    );
    expect(half).toMatch(/partial|error/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("still serves the IDE on its own host", async () => {
    expect((await bridge.api("/api/v1/health")).status).toBe(200);
  });
});
