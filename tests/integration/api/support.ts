import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { FakeLlm } from "../../fake-llm/server";
import { readSse, startTestBridge, type TestBridge } from "../helpers";

export type SseEvents = Awaited<ReturnType<typeof readSse>>;

/** A real bridge on the fake LLM, plus helpers a script would write. */
export interface ApiBridge extends TestBridge {
  createSession(options?: { yolo?: boolean; workspace?: string }): Promise<string>;
  chat(body: Record<string, unknown>): Promise<SseEvents>;
  json<T>(pathname: string, init?: { method?: string; body?: unknown }): Promise<T>;
  newWorkspace(): Promise<string>;
}

export async function startApiBridge(fake: FakeLlm): Promise<ApiBridge> {
  const bridge = await startTestBridge({ llmUrl: fake.url });
  const json = async <T>(pathname: string, init?: { method?: string; body?: unknown }) => {
    const response = await bridge.api(pathname, init);
    if (!response.ok)
      throw new Error(`${init?.method ?? "GET"} ${pathname}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  return Object.assign(bridge, {
    json,
    async createSession(options: { yolo?: boolean; workspace?: string } = {}) {
      return (
        await json<{ id: string }>("/api/v1/sessions", {
          body: { workspace: options.workspace ?? bridge.workspace, yolo: options.yolo },
        })
      ).id;
    },
    async chat(body: Record<string, unknown>) {
      const response = await bridge.api("/api/v1/chat/stream", { body });
      if (!response.ok) throw new Error(`chat/stream: ${response.status} ${await response.text()}`);
      return readSse(response);
    },
    async newWorkspace() {
      // Beside the bridge's workspace, never in its WORLDLINE_HOME (no session may open there).
      return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-ws-")));
    },
  });
}

/** The system prompt of a recorded model request. */
export function systemPromptOf(request: FakeLlm["requests"][number]): string {
  return String(request.body.messages?.[0]?.content ?? "");
}

/** The last user message of a recorded request: the turn's prompt with its `<context>` block (memories, skills). */
export function turnMessageOf(request: FakeLlm["requests"][number]): string {
  const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
  return String([...messages].reverse().find((message) => message.role === "user")?.content ?? "");
}

export function toolNamesOf(request: FakeLlm["requests"][number]): string[] {
  return ((request.body.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
}

export function eventNames(events: SseEvents): string[] {
  return events.map((event) => event.event);
}
