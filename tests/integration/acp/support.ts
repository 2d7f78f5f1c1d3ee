import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { testDatabaseUrl } from "../../db";

export const ROOT = path.resolve(import.meta.dirname, "../../..");
export const CLI = path.join(ROOT, "bin/worldline.mjs");

export async function tempDirs(): Promise<{ home: string; workspace: string }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-acp-home-"));
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-acp-ws-")));
  return { home, workspace };
}

export function cliEnv(home: string, llmUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // No REDIS_URL: the CLI shares its data dir with an in-process bridge that has no Redis (tests set it explicitly).
  const { PORT: _port, WORLDLINE_TOKEN: _token, REDIS_URL: _redis, ...rest } = process.env;
  return {
    ...rest,
    WORLDLINE_HOME: home,
    DATABASE_URL: testDatabaseUrl(home),
    OPENAI_BASE_URL: llmUrl,
    OPENAI_API_KEY: "test-key",
    WORLDLINE_MODEL: "fake-model",
    ...extra,
  };
}

export interface AcpProcess {
  child: ChildProcessWithoutNullStreams;
  agent: acp.ClientContext;
  connection: acp.ClientConnection;
  updates: acp.SessionNotification[];
  stderr: () => string;
  /** How the next session/request_permission is answered (and every one after, until changed). */
  permission: {
    answer: (request: acp.RequestPermissionRequest) => acp.RequestPermissionResponse;
    asked: acp.RequestPermissionRequest[];
  };
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** `worldline acp` as a child process, driven by the SDK's client side. */
export function startAcp(options: {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Arguments after `acp` (e.g. `--hub <url>`). */
  args?: string[];
  client?: (app: acp.ClientApp) => acp.ClientApp;
}): AcpProcess {
  const child = spawn(process.execPath, [CLI, "acp", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const updates: acp.SessionNotification[] = [];
  const permission: AcpProcess["permission"] = {
    answer: () => ({ outcome: { outcome: "selected", optionId: "allow_once" } }),
    asked: [],
  };
  let app = acp
    .client({ name: "test-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permission.asked.push(params);
      return permission.answer(params);
    });
  if (options.client) app = options.client(app);
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  return {
    child,
    agent: connection.agent,
    connection,
    updates,
    stderr: () => stderr,
    permission,
    exited,
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function updatesOf<K extends acp.SessionUpdate["sessionUpdate"]>(
  updates: acp.SessionNotification[],
  sessionId: string,
  kind: K,
): Extract<acp.SessionUpdate, { sessionUpdate: K }>[] {
  return updates
    .filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind)
    .map((n) => n.update as Extract<acp.SessionUpdate, { sessionUpdate: K }>);
}

export function textOf(chunks: { content: acp.ContentBlock }[]): string {
  return chunks.map((chunk) => (chunk.content.type === "text" ? chunk.content.text : "")).join("");
}
