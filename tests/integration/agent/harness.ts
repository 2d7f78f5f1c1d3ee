import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { RuntimeDeps } from "../../../server/agent";
import { loadConfig } from "../../../server/config";
import { startBridge, type Bridge } from "../../../server/main";
import type { EventEnvelope } from "../../../server/protocol";
import { afterAll, afterEach, beforeAll } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { plainText } from "../../support/model-text";
import { readSse, TEST_TOKEN, waitFor } from "../helpers";
import { testDatabaseUrl } from "../../db";

export interface AgentBridge extends Bridge {
  home: string;
  workspace: string;
  api(pathname: string, body?: unknown): Promise<Response>;
  createSession(): Promise<string>;
  /** One turn over POST /chat/stream, read to its end. */
  chat(sessionId: string, message: string): Promise<{ event: string; data: Record<string, unknown> }[]>;
  events(sessionId: string): Promise<EventEnvelope[]>;
  waitForEvent(sessionId: string, match: (event: EventEnvelope) => boolean, what?: string): Promise<EventEnvelope>;
}

/** A real bridge on a free port, its model pointed at the fake LLM, fast retries. */
export async function startAgentBridge(
  llmUrl: string,
  options: {
    home?: string;
    workspace?: string;
    env?: Record<string, string>;
    agent?: Pick<RuntimeDeps, "maxSteps" | "compactionThreshold">;
  } = {},
): Promise<AgentBridge> {
  const home = options.home ?? (await fs.mkdtemp(path.join(os.tmpdir(), "wl-agent-home-")));
  const workspace = options.workspace ?? (await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-agent-ws-"))));
  const config = loadConfig({
    PORT: "0",
    WORLDLINE_HOME: home,
    DATABASE_URL: testDatabaseUrl(home),
    WORLDLINE_TOKEN: TEST_TOKEN,
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: "test-key",
    WORLDLINE_MODEL: "fake-model",
    ...options.env,
  } as unknown as NodeJS.ProcessEnv);
  const bridge = await startBridge({
    config,
    ui: false,
    retry: { maxRetries: 3, baseDelayMs: 10, maxDelayMs: 2_000 },
    agent: options.agent,
  });
  const api = (pathname: string, body?: unknown) =>
    fetch(`${bridge.url}${pathname}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        authorization: `Bearer ${bridge.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const events = async (sessionId: string) =>
    (await (await api(`/api/v1/sessions/${sessionId}/events`)).json()) as EventEnvelope[];
  return {
    ...bridge,
    home,
    workspace,
    api,
    events,
    async createSession() {
      const response = await api("/api/v1/sessions", { workspace, yolo: true });
      if (!response.ok) throw new Error(`create session: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    },
    async chat(sessionId, message) {
      const response = await api("/api/v1/chat/stream", { session_id: sessionId, message });
      if (!response.ok) throw new Error(`chat: ${response.status} ${await response.text()}`);
      return readSse(response);
    },
    waitForEvent(sessionId, match, what = "event") {
      return waitFor(async () => (await events(sessionId)).find(match), 10_000, what) as Promise<EventEnvelope>;
    },
  };
}

/** The messages the fake LLM received in request `index`, as plain role/content pairs. */
export function messagesOf(request: {
  body: { messages: unknown };
}): { role: string; content: string | null; tool_call_id?: string; tool_calls?: unknown[] }[] {
  return request.body.messages as ReturnType<typeof messagesOf>;
}

/**
 * The same messages with what Worldline adds for the model taken out of their text: checkpoint markers
 * (which travel inside messages) and a turn's `<context>` block, so tests can compare the user's own words.
 */
export function plainMessages(request: { body: { messages: unknown } }): ReturnType<typeof messagesOf> {
  return messagesOf(request).map((message) =>
    typeof message.content === "string" ? { ...message, content: plainText(message.content) } : message,
  );
}

export { plainText };

export function completedOutcomes(events: EventEnvelope[]): string[] {
  return events.flatMap((event) => (event.type === "turn.completed" ? [event.payload.outcome] : []));
}

/** One fake model and one agent bridge for a test file: started before its tests, reset after each, closed at the end. */
export function useAgentBridge(ready: (fake: FakeLlm, bridge: AgentBridge) => void): void {
  let fake: FakeLlm | undefined;
  let bridge: AgentBridge | undefined;
  beforeAll(async () => {
    fake = await startFakeLlm();
    bridge = await startAgentBridge(fake.url);
    ready(fake, bridge);
  });
  afterAll(async () => {
    await bridge?.close();
    await fake?.close();
  });
  afterEach(() => fake?.reset());
}
