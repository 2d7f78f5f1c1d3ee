import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import * as acp from "@agentclientprotocol/sdk";
import { createAcpAgent, type AcpServices } from "../acp";
import { preloadOpenAI } from "../agent";
import fs from "node:fs/promises";
import path from "node:path";
import { loadConfig, ROOT_DIR } from "../config";
import type { Parts } from "../bridge";
import { errorMessage } from "../errors";
import type { Bridge } from "../main";
import { usageError } from "./options";
import { packageVersion } from "./version";

/** A bridge that will not stop within this is left behind: stdin closing must end the process promptly. */
const SHUTDOWN_GRACE_MS = 3_000;
/** When the HTTP half is served if no prompt has ended by then (see acpCommand). */
const SERVE_AFTER_MS = 2_000;

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
  // An editor prompts right after `session/new`, and the first request needs the SDK: its file is
  // read while the bridge starts rather than between the prompt and the request.
  preloadOpenAI();
  const options = { config, ui: false, kind: "acp" as const, sealEnvironment: true };
  // Started alongside the connection; the domain parts only (server/bridge), which a prompt needs.
  const partsReady = import("../bridge").then(({ openParts }) => openParts(options));
  partsReady.catch((error: unknown) => log(`could not start the bridge: ${errorMessage(error)}`));
  // The HTTP half (API, sockets, previews, push: socket.io, web-push and the routes to load) once the
  // first prompt has ended, or SERVE_AFTER_MS after start if none comes: it never holds up a first reply.
  let served: Promise<Bridge> | undefined;
  let bridge: Bridge | undefined;
  const serve = () =>
    (served ??= partsReady.then(async (parts) => {
      bridge = await (await import("../main")).serveParts(parts, options);
      log(`bridge for this ACP process: ${bridge.url}/?token=${bridge.token}`);
      return bridge;
    }));
  const serveNow = () =>
    void serve().catch((error: unknown) => log(`could not serve the bridge: ${errorMessage(error)}`));
  const serveLater = setTimeout(serveNow, SERVE_AFTER_MS);
  serveLater.unref();
  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const services = async (): Promise<AcpServices> => servicesOf(await partsReady, () => bridge);
  const connection = createAcpAgent(services, { promptEnded: serveNow }).connect(stream);
  await connection.closed;
  log("client disconnected; stopping");
  clearTimeout(serveLater);
  setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
  // A bridge that failed to start has nothing to close (its error was reported); exiting anyway: the grace timer ends the process.
  const servedBridge = await served?.catch(() => undefined);
  if (servedBridge) await servedBridge.close().catch(() => undefined);
  else await closeParts(await partsReady.catch(() => undefined));
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

function servicesOf(parts: Parts, served: () => Bridge | undefined): AcpServices {
  return {
    config: parts.config,
    version: packageVersion(),
    sessions: parts.sessions,
    runtime: parts.runtime,
    turns: parts.turns,
    log: parts.log,
    approvals: parts.approvals,
    mcp: parts.mcp,
    // Until the HTTP half is served, a session has no address to give.
    sessionUrl: (sessionId) => {
      const bridge = served();
      return bridge && `${bridge.url}/s/${sessionId}?token=${bridge.token}`;
    },
  };
}

/** Parts that were never served: their own ordered stop. */
async function closeParts(parts: Parts | undefined): Promise<void> {
  if (!parts) return;
  const { stopParts, closeStorage } = await import("../bridge");
  await stopParts(parts).catch(() => undefined); // exiting anyway: what fails to stop dies with the process
  await closeStorage(parts).catch(() => undefined);
}
