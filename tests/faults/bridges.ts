import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ENTRY = path.join(ROOT, "tests/integration/reliability/bridge-entry.ts");
export const TOKEN = "faults-token-0123456789abcdef";

/**
 * Lease timings for the suite: short, so a takeover happens within a test, and shorter than the
 * outages, which is what made a bridge back from an outage sweep a live peer.
 */
export const FAST_LEASES = { WORLDLINE_LEASE_TTL_MS: "3000", WORLDLINE_HEARTBEAT_MS: "1000" };

/** A `worldline serve` in its own process (killable with any signal), optionally under a wrapper command. */
export interface FaultBridge {
  name: string;
  url: string;
  child: ChildProcess;
  log(): string;
  api(pathname: string, init?: { method?: string; body?: unknown }): Promise<Response>;
  json<T>(pathname: string, body?: unknown): Promise<T>;
  exited: Promise<unknown>;
  stop(): Promise<void>;
}

export async function startBridge(options: {
  name: string;
  home: string;
  llmUrl: string;
  env?: Record<string, string>;
  /** A command line the bridge runs under, e.g. an `unshare … sh -c` that mounts a small tmpfs first. */
  wrap?: (command: string[]) => string[];
}): Promise<FaultBridge> {
  const command = [process.execPath, "--import", "tsx", ENTRY];
  const [file, ...args] = options.wrap ? options.wrap(command) : command;
  const child = spawn(file, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      WORLDLINE_HOME: options.home,
      WORLDLINE_TOKEN: TOKEN,
      OPENAI_BASE_URL: options.llmUrl,
      OPENAI_API_KEY: "x",
      WORLDLINE_MODEL: "fake-model",
      HOME: options.home,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (log += chunk));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`bridge ${options.name} did not start: ${log}`)), 60_000);
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const match = /READY (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => reject(new Error(`bridge ${options.name} exited before ready: ${log}`)));
  });
  const api = (pathname: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${url}${pathname}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  return {
    name: options.name,
    url,
    child,
    log: () => log,
    api,
    async json<T>(pathname: string, body?: unknown): Promise<T> {
      const response = await api(pathname, body === undefined ? {} : { body });
      if (!response.ok) throw new Error(`${options.name} ${pathname}: ${response.status} ${await response.text()}`);
      return (await response.json()) as T;
    },
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** Runs a fault's body; on failure the bridges' logs are printed (they say what the bridge saw). */
export async function withLogs<T>(bridges: FaultBridge[], body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    for (const bridge of bridges)
      process.stderr.write(`--- log of bridge ${bridge.name} ---\n${bridge.log().slice(-6_000)}\n`);
    throw error;
  }
}

export async function tempDir(prefix: string): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** POST /chat/stream and read the whole SSE answer. */
export async function chat(
  bridge: FaultBridge,
  body: Record<string, unknown>,
): Promise<{ status: number; events: SseEvent[]; text: string }> {
  const response = await bridge.api("/api/v1/chat/stream", { body });
  const raw = await response.text();
  if (!response.ok) return { status: response.status, events: [], text: raw };
  const events = raw
    .split("\n\n")
    .filter((block) => /^data: /m.test(block))
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? "message",
      data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "{}") as Record<string, unknown>,
    }));
  const text = events
    .filter((e) => e.event === "content_delta")
    .map((e) => String(e.data.delta))
    .join("");
  return { status: response.status, events, text };
}

export interface LoggedEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
}

export function events(bridge: FaultBridge, sessionId: string): Promise<LoggedEvent[]> {
  return bridge.json<LoggedEvent[]>(`/api/v1/sessions/${sessionId}/events`);
}

/**
 * The checks every fault ends with: the log's seqs are consecutive from 1, every turn that started
 * ended exactly once (and nothing of it came after its end), and every announced checkpoint exists.
 */
export async function expectConsistentLog(
  bridge: FaultBridge,
  sessionId: string,
): Promise<{ log: LoggedEvent[]; outcomes: Map<string, string> }> {
  const log = await events(bridge, sessionId);
  const problems: string[] = [];
  log.forEach((event, index) => {
    if (event.seq !== index + 1) problems.push(`seq ${event.seq} at index ${index}`);
  });
  const outcomes = new Map<string, string>();
  const ended = new Set<string>();
  for (const event of log) {
    const turnId = event.payload.turnId as string | undefined;
    if (event.type === "turn.completed" && turnId) {
      if (outcomes.has(turnId)) problems.push(`turn ${turnId} completed twice`);
      const outcome = String(event.payload.outcome);
      // An unexpected ending carries its reason, so a failing expectation shows why.
      outcomes.set(turnId, outcome === "completed" ? outcome : `${outcome}: ${String(event.payload.message)}`);
      ended.add(turnId);
    } else if (turnId && ended.has(turnId) && event.type !== "notice") {
      problems.push(`${event.type} of turn ${turnId} after its end (seq ${event.seq})`);
    }
  }
  for (const event of log) {
    if (event.type === "turn.started" && !outcomes.has(event.payload.turnId as string))
      problems.push(`turn ${String(event.payload.turnId)} never ended`);
  }
  const checkpoints = await bridge.json<{ id: string; number?: number }[]>(`/api/v1/sessions/${sessionId}/checkpoints`);
  const stored = new Set(checkpoints.map((row) => row.id));
  for (const event of log) {
    if (event.type === "checkpoint.created" && !stored.has(event.payload.checkpointId as string))
      problems.push(`checkpoint ${String(event.payload.number)} announced but not stored`);
  }
  if (problems.length) throw new Error(`inconsistent log of ${sessionId}:\n${problems.join("\n")}`);
  return { log, outcomes };
}

/** The promise's value, or an error naming what did not happen within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** One line per fault for the suite's summary: what the user saw, and how long recovery took. */
export function record(fault: string, result: Record<string, unknown>): void {
  process.stderr.write(`[faults] ${fault}: ${JSON.stringify(result)}\n`);
}
