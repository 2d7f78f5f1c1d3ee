import fs from "node:fs";
import { loadConfig, makeHome, PACKAGED, type BridgeConfig } from "../config";
import { errorMessage } from "../errors";
import { ROOT_DIR, startBridge, VERSION, type Bridge } from "../main";
import { openBrowser } from "./browser";
import {
  findRunningBridge,
  modelDifferences,
  modelEnvironment,
  writeBridgeRecord,
  type BridgeRecord,
} from "./bridge-record";
import { ensureBuilt } from "./build";
import { openFolderSession, sessionsOverHttp, type FolderSessions } from "./folder";
import { CliError, EXIT_OK, EXIT_USAGE, type StartOptions } from "./options";

/** A second `worldline` that lost the race for the port waits this long for the winner's record. */
const RACE_WAIT_MS = 5_000;
const RACE_POLL_MS = 100;
/** A close that hangs (a stuck child, a slow disk) still ends the process after this. */
const SHUTDOWN_GRACE_MS = 10_000;

const log = (line: string) => process.stderr.write(`[worldline] ${line}\n`);

/**
 * `worldline [folder]` (README, "Quick start"): the folder's session in this user's running bridge, or
 * in one started here; `worldline serve` (npm start): a bridge and its home page. Either way one
 * ready line on stdout. Returns the exit code when done at once (a running bridge was reused),
 * nothing while this process serves.
 */
export async function start(options: StartOptions, folder: string | null): Promise<number | undefined> {
  // Flags win over the environment they stand for.
  if (options.port !== undefined) process.env.PORT = options.port;
  if (options.host !== undefined) process.env.HOST = options.host;
  const config = configOrUsageError();
  checkHome(config.home);
  const wanted = { port: options.port === undefined ? undefined : config.port, host: options.host };

  if (folder !== null) {
    const running = await findRunningBridge(config.home, wanted);
    if (running) return reuse(running, folder, options);
  } else if (config.port !== 0) {
    // Before building anything: `worldline serve` on the port of this user's own bridge.
    const running = await findRunningBridge(config.home, { port: config.port });
    if (running) throw alreadyRunning(running);
  }
  const dev = process.env.WORLDLINE_DEV === "1";
  if (!dev && !PACKAGED) ensureBuilt(ROOT_DIR, log);
  if (!config.model)
    log("No model configured (WORLDLINE_MODEL unset): terminals and files work; the chat explains how to add one.");

  // Read before the bridge seals its environment (the record keeps fingerprints only).
  const model = modelEnvironment(process.env);
  let bridge: Bridge;
  try {
    bridge = await startBridge({ config, dev, sealEnvironment: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE") throw error;
    // Another `worldline` of this user may have just taken the port: use it once it is up (or,
    // serving, say it is there).
    if (folder === null) {
      const running = await findRunningBridge(config.home, { port: config.port });
      if (running) throw alreadyRunning(running);
    } else {
      const winner = await waitForRunningBridge(config.home, wanted);
      if (winner) return reuse(winner, folder, options);
    }
    throw new CliError(
      `Port ${config.port} on ${config.host} is in use by another program. Choose another with --port <n> (or PORT=<n>); --port 0 picks a free one.`,
    );
  }
  const removeRecord = writeBridgeRecord(config.home, {
    pid: process.pid,
    url: bridge.url,
    host: config.host,
    port: bridge.port,
    token: bridge.token,
    version: VERSION,
    model,
  });
  // In this process, not over HTTP: the requests would wait behind the UI's loading (see startBridge).
  const path = folder === null ? "/" : await openFolderSession(sessionsInProcess(bridge), folder);
  const url = `${bridge.url}${path}?token=${bridge.token}`;
  process.stdout.write(`Worldline ready: ${url}\n`);
  bridge.startPages();
  if (folder !== null) log(`Serving ${folder}. Run \`worldline\` in another folder to open it here too; Ctrl+C stops.`);
  if (options.open) openBrowser(url, log);
  stopOnSignals(bridge, removeRecord);
  return undefined;
}

async function reuse(running: BridgeRecord, folder: string, options: StartOptions): Promise<number> {
  log(
    `Using the Worldline already running (pid ${running.pid}, ${running.url}${running.version === VERSION ? "" : `, version ${running.version}`}).`,
  );
  const differing = modelDifferences(modelEnvironment(process.env), running);
  if (differing.length > 0)
    log(
      `It keeps the model settings it started with; your ${differing.join(", ")} differ and are not used. To use yours, stop it (Ctrl+C where it runs, or kill ${running.pid}) and run worldline again, or run a separate one with --port <n> (or another WORLDLINE_HOME).`,
    );
  const path = await openFolderSession(sessionsOverHttp(running.url, running.token), folder);
  const url = `${running.url}${path}?token=${running.token}`;
  process.stdout.write(`Worldline ready: ${url}\n`);
  if (options.open) openBrowser(url, log);
  return EXIT_OK;
}

/** `worldline serve` on the port of this user's own bridge: where it is, not "another program". */
function alreadyRunning(running: BridgeRecord): CliError {
  return new CliError(
    `A Worldline bridge of yours is already running on port ${running.port} (pid ${running.pid}): open ${running.url}/?token=${running.token} , or stop it (Ctrl+C where it runs) to start a new one; --port <n> starts another beside it.`,
  );
}

function sessionsInProcess(bridge: Bridge): FolderSessions {
  const { sessions } = bridge.services;
  return {
    list: async () =>
      (await sessions.list()).map((row) => ({
        id: row.id,
        workspace: row.workspace.path,
        archived: row.archived,
        runner: row.runner,
      })),
    create: (folder) => sessions.create({ workspace: folder }),
  };
}

async function waitForRunningBridge(home: string, wanted: { port?: number; host?: string }) {
  const deadline = Date.now() + RACE_WAIT_MS;
  while (Date.now() < deadline) {
    const running = await findRunningBridge(home, wanted);
    if (running) return running;
    await new Promise((resolve) => setTimeout(resolve, RACE_POLL_MS));
  }
  return undefined;
}

function configOrUsageError(): BridgeConfig {
  try {
    return loadConfig();
  } catch (error) {
    throw new CliError(errorMessage(error), EXIT_USAGE);
  }
}

/** WORLDLINE_HOME must be a folder this user can write: the database, snapshots and records live there. */
function checkHome(home: string): void {
  try {
    makeHome(home);
    fs.accessSync(home, fs.constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? errorMessage(error);
    throw new CliError(
      `WORLDLINE_HOME=${home} is not a folder you can write (${code}). Set WORLDLINE_HOME to one (default ~/.worldline).`,
    );
  }
}

function stopOnSignals(bridge: Bridge, removeRecord: () => void): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping…`);
    removeRecord();
    // A second signal, or a close that hangs, still ends the process.
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
    bridge.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log(`shutdown failed: ${errorMessage(error)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  // A bridge that dies another way leaves a record whose pid is gone: the next `worldline` removes it.
  process.on("exit", removeRecord);
}
