import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { io, type Socket } from "socket.io-client";
import { loadConfig } from "../../server/config";
import { startBridge, type Bridge } from "../../server/main";
import type { Ack } from "../../server/protocol";
import { testDatabaseUrl } from "../db";

export const TEST_TOKEN = "test-token-0123456789";

export interface TestBridge extends Bridge {
  home: string;
  workspace: string;
  /** fetch against the bridge with the token and JSON body handling. */
  api(
    pathname: string,
    init?: { method?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  socket(): Promise<Socket>;
  stop(): Promise<void>;
}

/** A real bridge on a free port with a temp data dir and a temp workspace folder. */
export async function startTestBridge(
  options: { llmUrl?: string; env?: Record<string, string>; home?: string } = {},
): Promise<TestBridge> {
  const home = options.home ?? (await fs.mkdtemp(path.join(os.tmpdir(), "wl-home-")));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-ws-")));
  const config = loadConfig({
    PORT: "0",
    WORLDLINE_HOME: home,
    DATABASE_URL: testDatabaseUrl(home),
    WORLDLINE_TOKEN: TEST_TOKEN,
    // Members of a hub open sessions on this machine only under its roots: the test workspace is one.
    WORLDLINE_HUB_ROOTS: workspace,
    ...(options.llmUrl
      ? { OPENAI_BASE_URL: options.llmUrl, OPENAI_API_KEY: "test-key", WORLDLINE_MODEL: "fake-model" }
      : {}),
    ...options.env,
  });
  const bridge = await startBridge({ config, ui: false, retry: { maxRetries: 3, baseDelayMs: 10, maxDelayMs: 2_000 } });
  const sockets: Socket[] = [];
  return {
    ...bridge,
    home,
    workspace,
    api(pathname, init = {}) {
      const headers: Record<string, string> = { authorization: `Bearer ${bridge.token}`, ...init.headers };
      if (init.body !== undefined) headers["content-type"] ??= "application/json";
      return fetch(`${bridge.url}${pathname}`, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers,
        body:
          init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body),
      });
    },
    async socket() {
      const socket = io(bridge.url, { auth: { token: bridge.token }, transports: ["websocket"], forceNew: true });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", () => resolve());
        socket.once("connect_error", reject);
      });
      return socket;
    },
    async stop() {
      for (const socket of sockets) socket.disconnect();
      await bridge.close();
    },
  };
}

/** A session whose turns an external ACP agent (`agentCommand`) runs, on the bridge's workspace. */
export async function externalAgentSession(bridge: TestBridge, agentCommand: string): Promise<string> {
  const response = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace, agentCommand } });
  if (!response.ok) throw new Error(`creating the session failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

/** A socket that authenticated with `auth` (a token, a share link, …), connected once and never reconnecting. */
export async function connectedSocket(url: string, auth: Record<string, string>): Promise<Socket> {
  const socket = io(url, { auth, transports: ["websocket"], forceNew: true, reconnection: false });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return socket;
}

/** Emits a command and returns its whole ack, `{ok:false}` included. */
export async function ackOf(socket: Socket, name: string, payload: unknown): Promise<Ack> {
  return (await socket.timeout(10_000).emitWithAck(name, payload)) as Ack;
}

/** Emits a command and returns its ack data, throwing on `{ok:false}`. */
export async function emitCommand<T = unknown>(socket: Socket, name: string, payload: unknown): Promise<T> {
  const ack = (await socket.timeout(10_000).emitWithAck(name, payload)) as Ack<T>;
  if (!ack.ok) throw Object.assign(new Error(ack.error.message), { code: ack.error.code });
  return ack.data;
}

/** Reads an SSE response into [{event, data}] until the stream ends. */
export async function readSse(response: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "{}");
      return { event, data };
    });
}

export { waitFor } from "../support/wait";

export function uniqueId(): string {
  return `cmd-${Math.random().toString(36).slice(2)}-${Date.now()}`;
}
