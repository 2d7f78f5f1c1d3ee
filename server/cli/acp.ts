import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import * as acp from "@agentclientprotocol/sdk";
import { createAcpAgent, type AcpServices } from "../acp";
import fs from "node:fs/promises";
import path from "node:path";
import { loadConfig, ROOT_DIR } from "../config";
import type { Bridge } from "../main";
import { usageError } from "./options";

/** A bridge that will not stop within this is left behind: stdin closing must end the process promptly. */
const SHUTDOWN_GRACE_MS = 3_000;

/**
 * `worldline acp`: an ACP agent on stdio. It runs its own bridge in-process
 * (on a free port, UI off) on the same WORLDLINE_HOME database, so its
 * sessions are ordinary Worldline sessions: a running `npm start` bridge lists
 * them and shows their history on reload, and this process's own bridge (URL
 * on stderr) shows them live. stdout carries ACP messages only.
 */
export async function acpCommand(argv: string[] = []): Promise<number> {
  const log = (line: string) => process.stderr.write(`[worldline acp] ${line}\n`);
  let hub: string | undefined;
  try {
    ({ hub } = parseArgs({ args: argv, options: { hub: { type: "string" } }, strict: true }).values);
  } catch (error) {
    throw usageError(error);
  }
  if (hub !== undefined) return acpOnHub(hub, log);
  const config = loadConfig({ ...process.env, PORT: process.env.WORLDLINE_ACP_PORT ?? "0" });
  // Started alongside the connection: `initialize` answers at once, the rest waits for the bridge.
  // Its modules load lazily (server/main pulls in most of the bundle), so the connection is up first.
  const bridgeReady = import("../main").then(({ startBridge }) =>
    startBridge({ config, ui: false, kind: "acp", sealEnvironment: true }),
  );
  bridgeReady.then(
    (bridge) => log(`bridge for this ACP process: ${bridge.url}/?token=${bridge.token}`),
    (error: unknown) => log(`could not start the bridge: ${error instanceof Error ? error.message : String(error)}`),
  );

  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = createAcpAgent(async () => servicesOf(await bridgeReady)).connect(stream);
  await connection.closed;
  log("client disconnected; stopping");
  setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
  const bridge = await bridgeReady.catch(() => undefined); // a bridge that failed to start has nothing to close (its error was reported)
  await bridge?.close().catch(() => undefined); // exiting anyway: the grace timer above ends the process
  return 0;
}

/**
 * `worldline acp --hub <url>`: the sessions live on a hub, driven as the person whose personal API
 * token is in WORLDLINE_API_TOKEN (an environment variable, so it never shows in `ps`).
 */
async function acpOnHub(url: string | undefined, log: (line: string) => void): Promise<number> {
  const token = process.env.WORLDLINE_API_TOKEN;
  if (!url || !/^https?:\/\//.test(url) || !token) {
    log("usage: WORLDLINE_API_TOKEN=wlp_… worldline acp --hub https://hub.example.com");
    return 2;
  }
  const { createHubAcpAgent } = await import("../acp/hub");
  // Not from server/main: this process runs no bridge, and loading one costs most of start-up.
  const { version } = JSON.parse(await fs.readFile(path.join(ROOT_DIR, "package.json"), "utf8")) as { version: string };
  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = createHubAcpAgent({ url: url.replace(/\/$/, ""), token, version }).connect(stream);
  await connection.closed;
  log("client disconnected; stopping");
  // The socket to the hub would keep the process alive: the client is gone, so is this agent.
  setTimeout(() => process.exit(0), 0).unref();
  return 0;
}

function servicesOf(bridge: Bridge): AcpServices {
  const services = bridge.services as Bridge["services"] & { approvals?: AcpServices["approvals"] };
  return {
    config: services.config,
    version: services.version,
    sessions: services.sessions,
    runtime: services.runtime,
    turns: services.turns,
    log: services.log,
    approvals: services.approvals,
    mcp: services.mcp,
    sessionUrl: (sessionId) => `${bridge.url}/s/${sessionId}?token=${bridge.token}`,
  };
}
