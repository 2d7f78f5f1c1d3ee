import fs from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { builtinTools, sharedTaskRegistry } from "../../../server/tools";
import { SessionPorts, type SessionPort } from "../../../server/protocol";
import { startTestBridge, type TestBridge } from "../helpers";
import { freePort } from "../../support/ports";
import { waitFor } from "../../support/wait";
import { DEV_SERVER, hostRequest, upgradeStatus } from "../preview/support";
import { startRunner, tempDir, type RunnerProcess } from "./support";

/** Previews of a session on a runner: its ports, read by the runner, and the proxy through the runner's link. */
let hub: TestBridge;
let runner: RunnerProcess;
let root: string;
let sessionId: string;
let devPort: number;
let pythonPort: number;
/** More than loopback's socket buffers hold: a stalled reader makes the proxy's own buffers fill. */
const BIG = 24 * 1024 * 1024;

async function ports(): Promise<SessionPort[]> {
  const response = await hub.api(`/api/v1/sessions/${sessionId}/ports`);
  expect(response.status).toBe(200);
  return SessionPorts.parse(await response.json());
}

beforeAll(async () => {
  hub = await startTestBridge();
  root = await tempDir("wl-runner-preview-root-");
  const token = await hub.services.runners!.add("previewbox");
  runner = startRunner({ hub: hub.url, token, home: await tempDir("wl-runner-preview-home-"), roots: [root] });
  await runner.connected();
  const created = await hub.api("/api/v1/sessions", { body: { workspace: root, runner: "previewbox" } });
  sessionId = ((await created.json()) as { id: string }).id;
  devPort = await freePort();
  pythonPort = await freePort();
  // The dev server runs in one of the session's terminals, on the runner's machine.
  const terminal = await hub.services.ptys.create(sessionId);
  hub.services.ptys.get(sessionId, terminal.terminalId).input(null, `node ${DEV_SERVER} ${devPort}\r`);
  // Python's server runs as the agent's background shell task, on the runner too.
  await fs.writeFile(path.join(root, "big.bin"), Buffer.alloc(BIG, "abcdefgh"));
  const shell = builtinTools().find((tool) => tool.name === "shell")!;
  const started = await shell.run(
    { command: `python3 -m http.server ${pythonPort} --bind 127.0.0.1`, background: true },
    {
      cwd: root,
      sessionId,
      toolCallId: "call_py",
      signal: new AbortController().signal,
      emit: () => {},
      host: hub.services.hosts.of("previewbox"),
    },
  );
  expect(started.isError).toBe(false);
}, 60_000);

afterAll(async () => {
  await sharedTaskRegistry.stopSession(sessionId);
  runner?.child.kill("SIGKILL");
  await hub?.stop();
}, 60_000);

describe("ports of a session on a runner", () => {
  it("lists the ports its terminal and shell task listen on, as the runner reads them", async () => {
    const listed = await waitFor(
      async () => {
        const list = await ports();
        return list.some((p) => p.port === devPort) && list.some((p) => p.port === pythonPort) ? list : null;
      },
      20_000,
      "both dev servers to listen on the runner",
    );
    const dev = listed.find((p) => p.port === devPort)!;
    expect(dev.command).toContain("dev-server.mjs");
    expect(dev.pid).toBeGreaterThan(1);
    expect(dev.url).toBe(`http://p${devPort}-${sessionId}.localhost:${hub.port}/`);
    expect(listed.find((p) => p.port === pythonPort)!.command).toContain("http.server");
    // The hub's own port (and the runner's own connection) are not the session's.
    expect(listed.some((p) => p.port === hub.port)).toBe(false);
  });

  it("tells a watching socket about a port that opens on the runner", async () => {
    const socket = await hub.socket();
    const changes: SessionPort[][] = [];
    socket.on("ports.changed", (message: { sessionId: string; ports: SessionPort[] }) => changes.push(message.ports));
    expect((await socket.emitWithAck("ports.watch", { sessionId })).ok).toBe(true);
    const extra = await freePort();
    const terminal = await hub.services.ptys.create(sessionId);
    hub.services.ptys.get(sessionId, terminal.terminalId).input(null, `node ${DEV_SERVER} ${extra}\r`);
    await waitFor(() => changes.some((list) => list.some((p) => p.port === extra)), 20_000, "ports.changed");
    await hub.services.ptys.close(sessionId, terminal.terminalId);
    await waitFor(() => changes.at(-1)?.every((p) => p.port !== extra), 10_000, "the closed port to leave");
    socket.disconnect();
  });

  it("names only processes the runner started: a pid the hub made up is not looked at", async () => {
    const listed = await hub.services.runners!.previews.ports("previewbox", [{ pid: process.pid, kind: "group" }]);
    expect(listed).toEqual([]);
  });
});

describe("the preview proxy for a session on a runner", () => {
  let host: string;
  let cookie: string;

  beforeAll(async () => {
    host = `p${devPort}-${sessionId}.localhost:${hub.port}`;
    const authorize = await fetch(
      `${hub.url}/api/v1/sessions/${sessionId}/preview/authorize?port=${devPort}&path=%2Fhello`,
      { redirect: "manual", headers: { authorization: `Bearer ${hub.token}` } },
    );
    expect(authorize.status).toBe(302);
    const ticket = new URL(authorize.headers.get("location")!);
    const redeemed = await hostRequest(hub.port, host, ticket.pathname + ticket.search);
    expect(redeemed.status).toBe(302);
    cookie = redeemed.headers["set-cookie"]![0].split(";")[0];
  });

  it("proxies a GET to the dev server on the runner's machine, through the runner's link", async () => {
    const page = await hostRequest(hub.port, host, "/hello?x=1", { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toBe("dev:GET /hello?x=1");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors");
    // Keep-alive connections (streams over the link) are reused: many requests in a row all answer.
    for (let i = 0; i < 20; i++)
      expect((await hostRequest(hub.port, host, `/n${i}`, { cookie })).body).toBe(`dev:GET /n${i}`);
    const headers = JSON.parse((await hostRequest(hub.port, host, "/headers", { cookie: `${cookie}; theirs=1` })).body);
    expect(headers.cookie).toBe("theirs=1");
  });

  it("carries a WebSocket upgrade and its messages both ways", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${hub.port}/echo`, { headers: { host, cookie } });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    for (const text of ["ping through the runner", "x".repeat(200_000)]) {
      const echoed = new Promise<string>((resolve) => ws.once("message", (data) => resolve(String(data))));
      ws.send(text);
      expect(await echoed).toBe(text);
    }
    ws.close();
    expect(await upgradeStatus(hub.port, host, "/echo")).toBe(401);
  });

  it("streams a large body whole, with the runner paused and resumed by a slow reader", async () => {
    const pyHost = `p${pythonPort}-${sessionId}.localhost:${hub.port}`;
    const grant = hub.services.previews!.grants.cookieFor({ sessionId, port: pythonPort });
    const body = await new Promise<Buffer>((resolve, reject) => {
      const req = http.request(
        {
          host: "127.0.0.1",
          port: hub.port,
          path: "/big.bin",
          agent: false,
          headers: { host: pyHost, cookie: `${grant.name}=${grant.value}` },
        },
        (res) => {
          expect(res.statusCode).toBe(200);
          const chunks: Buffer[] = [];
          // A reader that stalls, then reads slowly: the kernel's socket buffers fill, then the proxy's,
          // and the runner is told to pause reading the port (and to resume once this side reads again).
          res.pause();
          let timer: NodeJS.Timeout | undefined;
          setTimeout(
            () =>
              (timer = setInterval(() => {
                const chunk = res.read() as Buffer | null;
                if (chunk) chunks.push(chunk);
              }, 5)),
            1_500,
          );
          res.on("end", () => {
            clearInterval(timer);
            resolve(Buffer.concat(chunks));
          });
          res.on("error", reject);
          res.on("readable", () => undefined);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(body.length).toBe(BIG);
    expect(body.equals(Buffer.alloc(BIG, "abcdefgh"))).toBe(true);
  });

  it("answers 404 for a port the session does not own, and 502 when the dev server dies", async () => {
    const free = await freePort();
    const grant = hub.services.previews!.grants.cookieFor({ sessionId, port: free });
    const foreign = await hostRequest(hub.port, `p${free}-${sessionId}.localhost:${hub.port}`, "/", {
      cookie: `${grant.name}=${grant.value}`,
    });
    expect(foreign.status).toBe(404);
    const died = await hostRequest(hub.port, host, "/die", { cookie });
    expect(died.status).toBe(502);
    const started = Date.now();
    const half = await hostRequest(hub.port, host, "/half", { cookie }).then(
      (response) => response.body,
      (error: Error) => `error: ${error.message}`,
    );
    expect(half).toMatch(/partial|error/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("the browser tool's Chromium on a runner session", () => {
  it("opens the session's preview through the front door, and the page's hot-reload WebSocket connects through the runner", async () => {
    const browsers = hub.services.browsers!;
    const url = `http://p${devPort}-${sessionId}.localhost:${hub.port}/`;
    const opened = await browsers.navigate(sessionId, url);
    expect(opened.status).toBe(200);
    expect(opened.title).toBe("Dev page");
    const page = await browsers.page(sessionId);
    await page.waitForFunction(() => document.body.dataset.hmr === "connected", undefined, { timeout: 15_000 });
    expect(await page.textContent("#title")).toBe("Hello from dev");
    const shot = await browsers.screenshot(sessionId);
    expect(shot.width).toBeGreaterThan(0);
    await browsers.closeSession(sessionId);
  }, 60_000);
});
