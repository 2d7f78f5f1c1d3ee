import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TestBridge } from "../helpers";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CLI = path.join(ROOT, "server/cli/index.ts");

/** A `worldline runner` in its own process, with its own WORLDLINE_HOME and roots, killable with any signal. */
export interface RunnerProcess {
  child: ChildProcess;
  home: string;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stdout has shown the `connected to` line `count` times. */
  connected(count?: number, timeoutMs?: number): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function tempDir(prefix: string): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
}

/**
 * Starts a runner with only what a machine of its own would have: PATH, HOME and its
 * WORLDLINE_HOME. None of the hub's variables (database, model keys, token) reach it.
 */
export function startRunner(options: {
  hub: string;
  token: string;
  home: string;
  roots: string[];
  name?: string;
  env?: Record<string, string>;
}): RunnerProcess {
  const args = ["--import", "tsx", CLI, "runner", "--hub", options.hub, "--token", options.token];
  if (options.name) args.push("--name", options.name);
  for (const root of options.roots) args.push("--root", root);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      WORLDLINE_HOME: options.home,
      NODE_ENV: "production",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  /** Its pipes are drained: after `exit`, its last words may still be in them. */
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      resolve({ code, signal });
      for (const wake of waiters.splice(0)) wake();
    }),
  );
  const count = () => stdout.split("\n").filter((line) => /^Worldline runner \S+ connected to /.test(line)).length;
  return {
    child,
    home: options.home,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async connected(times = 1, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (count() < times) {
        if (child.exitCode !== null || child.signalCode !== null) {
          await closed;
          throw new Error(`runner exited (${child.exitCode ?? child.signalCode}) before connecting: ${stderr}`);
        }
        if (Date.now() > deadline) throw new Error(`runner did not connect: ${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
  };
}

/**
 * A TCP hop between a runner and a hub that a test can cut, as a network would: the runner stays
 * alive, its connection drops and new ones are refused until `restore`, which may point the hop at
 * another bridge of the deployment (a load balancer sending the reconnect elsewhere).
 */
export interface CuttableProxy {
  url: string;
  cut(): void;
  restore(target?: number): void;
  close(): Promise<void>;
}

/** `port`: where it listens (0: any free one); a hub allows that Host only when told (WORLDLINE_ALLOWED_HOSTS). */
export async function startCuttableProxy(target: number, port = 0): Promise<CuttableProxy> {
  const sockets = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return client.destroy();
    const upstream = net.connect(target, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore(next = target) {
      target = next;
      cut = false;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A runner enrolled on `hub` serving `root`, connected, and a yolo session in `root` on it. */
export async function runnerSessionOn(
  hub: TestBridge,
  name: string,
  root: string,
): Promise<{ runner: RunnerProcess; sessionId: string }> {
  const token = await hub.services.runners!.add(name);
  const runner = startRunner({ hub: hub.url, token, home: await tempDir(`wl-runner-${name}-home-`), roots: [root] });
  await runner.connected();
  const created = await hub.api("/api/v1/sessions", { body: { workspace: root, runner: name, yolo: true } });
  return { runner, sessionId: ((await created.json()) as { id: string }).id };
}
