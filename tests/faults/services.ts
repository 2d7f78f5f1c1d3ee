import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readdirSync } from "node:fs";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { waitFor } from "../support/wait";
import { freePort } from "../support/ports";

/**
 * Private services for the fault suite: a PostgreSQL cluster and a Redis of this run's own, on free
 * ports, so stopping and starting them disturbs nothing else on the machine (never the machine's
 * own PostgreSQL on 5432 or Redis on 6379). Each is stopped and removed by its `destroy`.
 */
const run = promisify(execFile);
/** Debian's PostgreSQL binaries, newest version first (PG_BIN overrides). */
const PG_BIN =
  process.env.PG_BIN ??
  `/usr/lib/postgresql/${readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a))[0]}/bin`;

export interface PrivatePostgres {
  url(database?: string): string;
  port: number;
  start(): Promise<void>;
  /** `fast` ends connections cleanly; `immediate` is a crash (no checkpoint). */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * initdb in a temporary directory and pg_ctl on a free port: as the postgres user when run as root
 * (initdb refuses root), as the developer's own user otherwise.
 */
export async function startPostgres(): Promise<PrivatePostgres> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), "wl-faults-pg-"));
  const root = process.getuid?.() === 0;
  if (root) await run("chown", ["postgres:postgres", base]);
  const data = path.join(base, "data");
  const asPostgres = (command: string, args: string[]) =>
    root
      ? run("runuser", ["-u", "postgres", "--", path.join(PG_BIN, command), ...args], { timeout: 60_000 })
      : run(path.join(PG_BIN, command), args, { timeout: 60_000 });
  await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const port = await freePort();
  const options = `-p ${port} -k ${base} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const pg: PrivatePostgres = {
    port,
    url: (database = "postgres") => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      await asPostgres("pg_ctl", ["-D", data, "-o", options, "-l", path.join(base, "log"), "-w", "start"]);
    },
    async stop(mode = "fast") {
      await asPostgres("pg_ctl", ["-D", data, "-m", mode, "-w", "stop"]);
    },
    async destroy() {
      await pg.stop("immediate").catch(() => undefined); // already stopped
      await fs.rm(base, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}

export interface PrivateRedis {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

/** redis-server on a free port, nothing kept on disk. */
export async function startRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        {
          stdio: "ignore",
        },
      );
      await waitForPort(port);
    },
    async stop() {
      const current = child;
      child = null;
      if (!current || current.exitCode !== null) return;
      const exited = new Promise((resolve) => current.once("exit", resolve));
      current.kill("SIGKILL");
      await exited;
    },
    destroy: () => redis.stop(),
  };
  await redis.start();
  return redis;
}

async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
  await waitFor(listening, timeoutMs, `something to listen on ${port}`);
}
