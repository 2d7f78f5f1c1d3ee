import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { io, type Socket } from "socket.io-client";
import { loadConfig } from "../../../server/config";
import { startBridge, type Bridge, type BridgeOptions } from "../../../server/main";
import { LiveTranscript, type Ack, type EventEnvelope, type SubscribeResult } from "../../../server/protocol";
import { TEST_TOKEN, uniqueId } from "../helpers";
import { testDatabaseUrl } from "../../db";

export interface SyncBridge extends Bridge {
  home: string;
  workspace: string;
  api(pathname: string, init?: { method?: string; body?: unknown; token?: string }): Promise<Response>;
  createSession(options?: { yolo?: boolean }): Promise<string>;
  events(sessionId: string): Promise<{ seq: number; type: string; payload: unknown; created_at: string }[]>;
}

/** A real bridge over temp dirs (or the given home/workspace/port, to restart one). */
export async function startSyncBridge(
  llmUrl: string,
  options: { home?: string; workspace?: string; port?: number; lease?: BridgeOptions["lease"] } = {},
): Promise<SyncBridge> {
  const home = options.home ?? (await fs.mkdtemp(path.join(os.tmpdir(), "wl-sync-home-")));
  const workspace = options.workspace ?? (await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-sync-ws-"))));
  const config = loadConfig({
    PORT: String(options.port ?? 0),
    WORLDLINE_HOME: home,
    DATABASE_URL: testDatabaseUrl(home),
    WORLDLINE_TOKEN: TEST_TOKEN,
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: "x",
    WORLDLINE_MODEL: "fake-model",
  });
  const bridge = await startBridge({
    config,
    ui: false,
    retry: { maxRetries: 3, baseDelayMs: 10, maxDelayMs: 2_000 },
    lease: options.lease,
  });
  const api: SyncBridge["api"] = (pathname, init = {}) =>
    fetch(`${bridge.url}${pathname}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${init.token ?? bridge.token}`,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  return {
    ...bridge,
    home,
    workspace,
    api,
    async createSession(sessionOptions = {}) {
      const response = await api("/api/v1/sessions", { body: { workspace, yolo: sessionOptions.yolo ?? true } });
      if (response.status !== 201) throw new Error(`create session: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    },
    async events(sessionId) {
      return (await (await api(`/api/v1/sessions/${sessionId}/events`)).json()) as {
        seq: number;
        type: string;
        payload: unknown;
        created_at: string;
      }[];
    },
  };
}

/**
 * A tab as the UI runs one: a socket.io client that subscribes with what it has on every
 * (re)connect and keeps a gap-free LiveTranscript; `applied` is every event it applied.
 */
export class SyncClient {
  readonly socket: Socket;
  readonly live: LiveTranscript;
  applied: EventEnvelope[] = [];
  resets = 0;
  subscribes = 0;

  constructor(
    url: string,
    readonly sessionId: string,
    auth: Record<string, string>,
  ) {
    this.live = new LiveTranscript((events, reset) => {
      if (reset) {
        this.applied = [];
        this.resets++;
      }
      this.applied.push(...events);
    });
    this.socket = io(url, {
      auth,
      transports: ["websocket"],
      forceNew: true,
      reconnectionDelay: 50,
      reconnectionDelayMax: 200,
    });
    this.socket.on("session.events", (message: { sessionId: string; events: EventEnvelope[] }) => {
      if (message.sessionId !== this.sessionId) return;
      this.live.live(message.events);
      if (this.live.gap()) void this.subscribe();
    });
    this.socket.on("connect", () => void this.subscribe());
    // A bridge shutting down closes sockets itself, which socket.io does not retry; the UI does (use-session).
    this.socket.on("disconnect", (reason) => {
      if (reason === "io server disconnect" && !this.closed) setTimeout(() => this.socket.connect(), 200);
    });
    this.socket.on("connect_error", () => {
      if (!this.socket.active && !this.closed) setTimeout(() => this.socket.connect(), 200);
    });
  }

  private closed = false;

  async subscribe(): Promise<void> {
    this.subscribes++;
    try {
      const ack = (await this.socket.timeout(10_000).emitWithAck("session.subscribe", {
        commandId: uniqueId(),
        sessionId: this.sessionId,
        ...this.live.resumeFrom(),
      })) as Ack<SubscribeResult>;
      if (ack.ok) this.live.subscribed(ack.data);
    } catch {
      // Disconnected meanwhile: the next connect subscribes again.
    }
  }

  get lastSeq(): number {
    return this.live.state.lastSeq;
  }

  close(): void {
    this.closed = true;
    this.socket.disconnect();
  }
}

export function comparable(events: { seq: number; type: string; payload: unknown }[]) {
  return events.map((event) => ({ seq: event.seq, type: event.type, payload: event.payload }));
}
