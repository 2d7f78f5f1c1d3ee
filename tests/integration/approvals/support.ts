import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { io, type Socket } from "socket.io-client";
import type { AgentTool } from "../../../server/agent";
import { loadConfig } from "../../../server/config";
import { startBridge, type Bridge } from "../../../server/main";
import type { ApprovalChange, ApprovalView } from "../../../server/protocol";
import { createShellTool } from "../../../server/tools";
import { TEST_TOKEN, waitFor } from "../helpers";
import { testDatabaseUrl } from "../../db";

/** A real bridge with the real shell tool, on a free port, over temp dirs. */
export interface ApprovalBridge extends Bridge {
  home: string;
  workspace: string;
  api(pathname: string, init?: { method?: string; body?: unknown }): Promise<Response>;
  socket(): Promise<Socket>;
  createSession(options?: { yolo?: boolean }): Promise<string>;
  pending(): Promise<ApprovalView[]>;
  /** Waits for the session's turn.completed event (optionally the n-th) and returns its payload. */
  turnCompleted(sessionId: string, nth?: number): Promise<{ outcome: string }>;
  events(sessionId: string): Promise<{ seq: number; type: string; payload: Record<string, unknown> }[]>;
  stop(): Promise<void>;
}

export async function startApprovalBridge(
  llmUrl: string,
  options: { home?: string; tools?: () => AgentTool[] } = {},
): Promise<ApprovalBridge> {
  const home = options.home ?? (await fs.mkdtemp(path.join(os.tmpdir(), "wl-appr-home-")));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-appr-ws-")));
  const config = loadConfig({
    PORT: "0",
    WORLDLINE_HOME: home,
    DATABASE_URL: testDatabaseUrl(home),
    WORLDLINE_TOKEN: TEST_TOKEN,
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: "x",
    WORLDLINE_MODEL: "fake-model",
  } as Record<string, string> as NodeJS.ProcessEnv);
  const shell = createShellTool({ killGraceMs: 100 });
  const bridge = await startBridge({
    config,
    ui: false,
    retry: { maxRetries: 3, baseDelayMs: 10, maxDelayMs: 2_000 },
    tools: options.tools ?? (() => [shell]),
  });
  const sockets: Socket[] = [];
  const api = (pathname: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${bridge.url}${pathname}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${bridge.token}`,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const events = async (sessionId: string) =>
    (await (await api(`/api/v1/sessions/${sessionId}/events`)).json()) as {
      seq: number;
      type: string;
      payload: Record<string, unknown>;
    }[];
  return {
    ...bridge,
    home,
    workspace,
    api,
    events,
    async socket() {
      const socket = io(bridge.url, { auth: { token: bridge.token }, transports: ["websocket"], forceNew: true });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", () => resolve());
        socket.once("connect_error", reject);
      });
      return socket;
    },
    async createSession(sessionOptions = {}) {
      const response = await api("/api/v1/sessions", { body: { workspace, yolo: sessionOptions.yolo } });
      return ((await response.json()) as { id: string }).id;
    },
    async pending() {
      return (await (await api("/api/v1/approvals?status=pending")).json()) as ApprovalView[];
    },
    async turnCompleted(sessionId, nth = 1) {
      const done = await waitFor(
        async () => (await events(sessionId)).filter((event) => event.type === "turn.completed")[nth - 1],
        20_000,
        "turn.completed",
      );
      return done.payload as { outcome: string };
    },
    async stop() {
      for (const socket of sockets) socket.disconnect();
      await bridge.close();
    },
  };
}

/** Collects `approvals.changed` messages a socket hears. */
export function collectChanges(socket: Socket): ApprovalChange[] {
  const changes: ApprovalChange[] = [];
  socket.on("approvals.changed", (change: ApprovalChange) => changes.push(change));
  return changes;
}

export function toolMessages(requestBody: { messages: { role: string; content: string }[] }): string[] {
  return requestBody.messages.filter((message) => message.role === "tool").map((message) => message.content);
}
