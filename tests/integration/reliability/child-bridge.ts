import { spawn, type ChildProcess } from "node:child_process";
import { io, type Socket } from "socket.io-client";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { testDatabaseUrl } from "../../db";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const ENTRY = path.join(ROOT, "tests/integration/reliability/bridge-entry.ts");

export const CHILD_TOKEN = "child-token-0123456789abcdef";

/** A bridge running in a child process (`tsx bridge-entry.ts`), killable with any signal. */
export interface ChildBridge {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  api(pathname: string, init?: { method?: string; body?: unknown }): Promise<Response>;
  /** Resolves with the exit code/signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startChildBridge(options: {
  home: string;
  llmUrl: string;
  env?: Record<string, string>;
}): Promise<ChildBridge> {
  // `node --import tsx`, not the tsx CLI: the CLI runs the script in a second process that a SIGKILL would miss.
  const child = spawn(process.execPath, ["--import", "tsx", ENTRY], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      WORLDLINE_HOME: options.home,
      DATABASE_URL: testDatabaseUrl(options.home),
      WORLDLINE_TOKEN: CHILD_TOKEN,
      OPENAI_BASE_URL: options.llmUrl,
      OPENAI_API_KEY: "x",
      WORLDLINE_MODEL: "fake-model",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`bridge did not start: ${stderr}`)), 60_000);
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /READY (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(({ code }) => reject(new Error(`bridge exited (${code}) before ready: ${stderr}`)));
  });
  return {
    url,
    child,
    stderr: () => stderr,
    exited,
    api(pathname, init = {}) {
      return fetch(`${url}${pathname}`, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: {
          authorization: `Bearer ${CHILD_TOKEN}`,
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    },
  };
}

/** A socket to the child bridge, connected (no reconnection: a killed bridge stays gone). */
export function connectTo(bridge: ChildBridge): Promise<Socket> {
  const socket = io(bridge.url, {
    auth: { token: CHILD_TOKEN },
    transports: ["websocket"],
    forceNew: true,
    reconnection: false,
  });
  return new Promise((resolve, reject) => {
    socket.once("connect", () => resolve(socket));
    socket.once("connect_error", reject);
  });
}
