import { loadConfig } from "../config";
import { ROOT_DIR, startBridge } from "../main";
import { ensureBuilt } from "./build";

/** `worldline serve`: build what is missing, start the bridge, print exactly one ready line. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const dev = process.env.WORLDLINE_DEV === "1";
  const log = (line: string) => process.stderr.write(`[worldline] ${line}\n`);
  if (!dev) ensureBuilt(ROOT_DIR, log);
  // The LAN warning is printed by startBridge, for every entry point.
  if (!config.model)
    log("No model configured (WORLDLINE_MODEL unset): terminals and files work; the chat explains how to add one.");

  const bridge = await startBridge({ config, dev });
  process.stdout.write(`Worldline ready: ${bridge.url}/?token=${bridge.token}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping…`);
    // A second signal, or a close that hangs, still ends the process.
    setTimeout(() => process.exit(1), 10_000).unref();
    bridge.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}
