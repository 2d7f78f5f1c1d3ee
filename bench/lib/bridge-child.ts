/**
 * A bridge in its own process, so that it and the benchmark client each get a core
 * and the bridge's memory and CPU are its own. The child prints one JSON line with its
 * address once it listens; `startBridgeProcess` spawns it and waits for that line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { io, type Socket } from "socket.io-client";
import type { Ack } from "../../server/protocol/index.ts";
import { isMain } from "./cli.ts";

export const BENCH_TOKEN = "bench-token-0123456789abcdef";
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface BridgeProcess {
  child: ChildProcess;
  url: string;
  token: string;
  home: string;
  /** From spawn to the address line: module loading, migrations, listen. */
  readyMs: number;
  stop(): Promise<void>;
}

/** Spawns an API-only bridge with a fresh data dir; `env` adds e.g. the model variables. */
export async function startBridgeProcess(env: Record<string, string> = {}): Promise<BridgeProcess> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-home-"));
  const start = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url)], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", WORLDLINE_HOME: home, WORLDLINE_TOKEN: BENCH_TOKEN, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await firstLine(child, 60_000);
  const readyMs = performance.now() - start;
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  return {
    child,
    url,
    token,
    home,
    readyMs,
    stop: () => stopChild(child).finally(() => fs.rmSync(home, { recursive: true, force: true })),
  };
}

/** Resolves with the first stdout line of `child`; rejects if it exits or stays silent. */
export function firstLine(
  child: ChildProcess,
  timeoutMs: number,
  match: (line: string) => boolean = () => true,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const timer = setTimeout(() => reject(new Error(`no ready line within ${timeoutMs} ms`)), timeoutMs);
    const onData = (data: Buffer) => {
      buffered += data.toString();
      let end: number;
      while ((end = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        if (!match(line)) continue;
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        child.off("exit", onExit);
        return resolve(line);
      }
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code} before its ready line`));
    };
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
  });
}

/** SIGTERM, then SIGKILL if the process is still there after a grace period. */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

export async function connectSocket(url: string, token: string): Promise<Socket> {
  const socket = io(url, { auth: { token }, transports: ["websocket"], forceNew: true });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return socket;
}

let commandCounter = 0;

/** Emits a command with a fresh commandId and returns its ack data. */
export async function command<T>(socket: Socket, name: string, payload: Record<string, unknown>): Promise<T> {
  const commandId = `bench-${process.pid}-${++commandCounter}`;
  const ack = (await socket.timeout(30_000).emitWithAck(name, { commandId, ...payload })) as Ack<T>;
  if (!ack.ok) throw new Error(`${name}: ${ack.error.message}`);
  return ack.data;
}

/** The child side: an API-only bridge on the environment's config; prints its address. */
async function serveChild(): Promise<void> {
  const { loadConfig } = await import("../../server/config/index.ts");
  const { startBridge } = await import("../../server/main.ts");
  const bridge = await startBridge({ config: loadConfig(), ui: false });
  process.stdout.write(`${JSON.stringify({ url: bridge.url, token: bridge.token })}\n`);
  const stop = () => void bridge.close().finally(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

if (isMain(import.meta.url)) await serveChild();
