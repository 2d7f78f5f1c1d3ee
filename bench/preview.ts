/**
 * Previews: what the preview proxy adds to a dev server's answers, and what the
 * agent's browser screenshot costs. A real bridge (in process), a real dev server (the tests'
 * tests/fixtures/preview/dev-server.mjs, HTTP + WebSocket) started as the session's background
 * shell task, so the session owns its port as it would in use.
 * - `preview_proxy_overhead_ms`: p50 of a small GET through the preview origin minus the p50 of
 *   the same GET straight to the dev server; both on kept-alive connections, alternating (≤ 3 ms).
 * - `preview_ws_echo_overhead_ms`: the same for a WebSocket message echoed by the dev server (≤ 3 ms).
 * - `browser_screenshot_ms`: p50 of the browser tool's screenshot of the loaded page (reported).
 * Run alone with `npx tsx bench/preview.ts`; the last line is one JSON object.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import http from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { loadConfig } from "../server/config/index.ts";
import { startBridge } from "../server/main.ts";
import { builtinTools, sharedTaskRegistry } from "../server/tools/index.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { median, round, sleep } from "./lib/stats.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DEV_SERVER = path.join(ROOT, "tests", "fixtures", "preview", "dev-server.mjs");
/** Requests (and echoes) per path; the p50 of these. */
const SAMPLES = 300;
/** Before measuring: connections opened, code paths warmed, the port list read. */
const WARMUP = 30;
/** Screenshots of the loaded page; the first launches Chromium and is not counted. */
const SCREENSHOTS = 10;

interface PreviewBenchResult {
  direct_get_p50_ms: number;
  proxied_get_p50_ms: number;
  preview_proxy_overhead_ms: number;
  direct_ws_echo_p50_ms: number;
  proxied_ws_echo_p50_ms: number;
  preview_ws_echo_overhead_ms: number;
  browser_screenshot_ms: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function timedGet(agent: http.Agent, port: number, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/small", agent, headers }, (res) => {
      res.resume();
      res.on("end", () =>
        res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`status ${res.statusCode}`)),
      );
    });
    req.on("error", reject);
  });
}

async function openSocket(url: string, headers: Record<string, string>): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return ws;
}

function timedEcho(ws: WebSocket): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    ws.once("message", () => resolve(performance.now() - started));
    ws.send("ping");
  });
}

/** Alternates the two, `SAMPLES` each after `WARMUP`; the p50 of each. */
async function paired(direct: () => Promise<number>, proxied: () => Promise<number>) {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const d = await direct();
    const p = await proxied();
    if (i >= WARMUP) {
      a.push(d);
      b.push(p);
    }
  }
  return { direct: median(a), proxied: median(b) };
}

export async function run(): Promise<PreviewBenchResult> {
  const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), "wl-bench-preview-")));
  const bridge = await startBridge({
    config: loadConfig({
      PORT: "0",
      WORLDLINE_HOME: path.join(scratch, "home"),
      WORLDLINE_TOKEN: "bench-token-0123456789",
    }),
    ui: false,
  });
  const session = await bridge.services.sessions.create({ workspace: scratch });
  try {
    const devPort = await freePort();
    const shell = builtinTools().find((tool) => tool.name === "shell")!;
    await shell.run(
      { command: `exec node ${DEV_SERVER} ${devPort}`, background: true },
      {
        cwd: scratch,
        sessionId: session.id,
        toolCallId: "bench",
        signal: new AbortController().signal,
        emit: () => undefined,
      },
    );
    const previews = bridge.services.previews!;
    for (let tries = 0; !(await previews.list(session.id)).some((p) => p.port === devPort); tries++) {
      if (tries > 200) throw new Error("the dev server did not start");
      await sleep(50);
    }
    const grant = previews.grants.cookieFor({ sessionId: session.id, port: devPort });
    const previewHeaders = {
      host: `p${devPort}-${session.id}.localhost:${bridge.port}`,
      cookie: `${grant.name}=${grant.value}`,
    };

    const directAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const proxyAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = await paired(
      () => timedGet(directAgent, devPort, {}),
      () => timedGet(proxyAgent, bridge.port, previewHeaders),
    );
    directAgent.destroy();
    proxyAgent.destroy();

    const directWs = await openSocket(`ws://127.0.0.1:${devPort}/echo`, {});
    const proxiedWs = await openSocket(`ws://127.0.0.1:${bridge.port}/echo`, previewHeaders);
    const echo = await paired(
      () => timedEcho(directWs),
      () => timedEcho(proxiedWs),
    );
    directWs.close();
    proxiedWs.close();

    const browsers = bridge.services.browsers!;
    await browsers.navigate(session.id, `http://127.0.0.1:${devPort}/`);
    await browsers.screenshot(session.id);
    const shots: number[] = [];
    for (let i = 0; i < SCREENSHOTS; i++) {
      const started = performance.now();
      await browsers.screenshot(session.id);
      shots.push(performance.now() - started);
    }

    const result: PreviewBenchResult = {
      direct_get_p50_ms: round(get.direct, 3),
      proxied_get_p50_ms: round(get.proxied, 3),
      preview_proxy_overhead_ms: round(get.proxied - get.direct, 3),
      direct_ws_echo_p50_ms: round(echo.direct, 3),
      proxied_ws_echo_p50_ms: round(echo.proxied, 3),
      preview_ws_echo_overhead_ms: round(echo.proxied - echo.direct, 3),
      browser_screenshot_ms: round(median(shots), 1),
    };
    console.error(
      `preview: GET ${result.direct_get_p50_ms} → ${result.proxied_get_p50_ms} ms (+${result.preview_proxy_overhead_ms}), ` +
        `WS echo ${result.direct_ws_echo_p50_ms} → ${result.proxied_ws_echo_p50_ms} ms (+${result.preview_ws_echo_overhead_ms}), ` +
        `screenshot ${result.browser_screenshot_ms} ms`,
    );
    return result;
  } finally {
    await sharedTaskRegistry.stopSession(session.id);
    await bridge.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) printJsonLine(await run());
