import { parseArgs } from "node:util";
import * as z from "zod";
import { loadConfig } from "../config";
import { RunnerView } from "../protocol";
import { LAST_SEEN_EVERY_MS, RunnerHub } from "../runners";
import * as store from "../store";
import { findRunningBridge } from "./bridge-record";
import { checkDatabaseModules } from "./native";
import { CliError, EXIT_OK, EXIT_USAGE, usageError } from "./options";

const USAGE = `Usage:
  worldline runners add NAME [--root DIR]...   enroll a runner; prints its one-time token last
  worldline runners list                       name, connected or offline, last seen, roots
  worldline runners rename OLD NEW             rename it; its sessions follow, a connected runner reconnects
  worldline runners revoke NAME                revoke its credential; a connected runner is dropped at once
`;

const ACTIONS = new Set(["add", "list", "rename", "revoke"]);
const SEE_RUNNERS_HELP = "Run `worldline runners --help` for usage.";
/** The running bridge answers at once; one that does not is left out and last_seen decides. */
const BRIDGE_TIMEOUT_MS = 3_000;
/**
 * A connected runner's last_seen is written every LAST_SEEN_EVERY_MS by the bridge holding it;
 * two marks missed means it is gone (a stopped runner shows connected for up to this long).
 */
const FRESH_LAST_SEEN_MS = 2 * LAST_SEEN_EVERY_MS;

/** `worldline runners add|list|rename|revoke`: on the hub's machine, with the hub's environment (its database). */
export async function runnersCommand(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === "--help" || action === "-h" || action === "help") {
    process.stdout.write(USAGE);
    return EXIT_OK;
  }
  if (!action) {
    process.stderr.write(USAGE);
    return EXIT_USAGE;
  }
  if (!ACTIONS.has(action)) {
    const what = action.startsWith("-") ? "option" : "runners command";
    throw new CliError(`Unknown ${what} "${action}". ${SEE_RUNNERS_HELP}`, EXIT_USAGE);
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { root: { type: "string", multiple: true } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw usageError(error, SEE_RUNNERS_HELP);
  }
  const { values, positionals } = parsed;
  const config = loadConfig();
  checkDatabaseModules(config.databaseUrl);
  const { db } = await store.openDb(config.home, config.databaseUrl);
  const hub = new RunnerHub({ db });
  try {
    switch (action) {
      case "add": {
        const [name] = positionals;
        if (!name) break;
        const token = await hub.add(name, values.root ?? []);
        process.stderr.write(
          `Runner "${name}" added. On its machine run:\n  worldline runner --hub <this hub's URL> --token <the token below> --root <folder>\n` +
            "The token works once, within 24 hours.\n",
        );
        process.stdout.write(`${token}\n`);
        return 0;
      }
      case "list": {
        const connected = await connectedOnBridge(config.home);
        for (const runner of await hub.list()) {
          const online = connected ? connected.has(runner.name) : recentlySeen(runner.last_seen);
          const fields = [runner.name, online ? "connected" : "offline", runner.last_seen ?? "never seen"];
          process.stdout.write(`${[...fields, runner.roots.join(",")].join("\t")}\n`);
        }
        return 0;
      }
      case "rename": {
        const [from, to] = positionals;
        if (!from || !to) break;
        if (!(await hub.rename(from, to))) {
          process.stderr.write(`No runner named "${from}".\n`);
          return 1;
        }
        process.stdout.write(`Runner "${from}" renamed to "${to}".\n`);
        return 0;
      }
      case "revoke": {
        const [name] = positionals;
        if (!name) break;
        if (!(await hub.revoke(name))) {
          process.stderr.write(`No runner named "${name}".\n`);
          return 1;
        }
        process.stdout.write(`Runner "${name}" revoked.\n`);
        return 0;
      }
    }
    process.stderr.write(USAGE);
    return EXIT_USAGE;
  } finally {
    await hub.close();
    await db.$disconnect();
  }
}

/**
 * The runners connected to the bridge running here on this WORLDLINE_HOME, as GET /api/v1/runners
 * says; undefined when none answers (a hub elsewhere, or stopped): then last_seen tells.
 */
async function connectedOnBridge(home: string): Promise<Set<string> | undefined> {
  const running = await findRunningBridge(home, {});
  if (!running) return undefined;
  try {
    const response = await fetch(`${running.url}/api/v1/runners`, {
      headers: { authorization: `Bearer ${running.token}` },
      signal: AbortSignal.timeout(BRIDGE_TIMEOUT_MS),
    });
    if (!response.ok) return undefined;
    const runners = z.array(RunnerView).parse(await response.json());
    return new Set(runners.filter((runner) => runner.connected).map((runner) => runner.name));
  } catch {
    return undefined; // it stopped meanwhile, or answers something else: last_seen decides
  }
}

function recentlySeen(lastSeen: string | null): boolean {
  return lastSeen !== null && Date.now() - Date.parse(lastSeen) < FRESH_LAST_SEEN_MS;
}
