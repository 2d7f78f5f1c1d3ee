/**
 * A bridge as its own process for crash and shutdown tests: the environment
 * configures it (as `worldline serve` would), no Next.js UI, one ready line on
 * stdout. SIGTERM/SIGINT close it the way `worldline serve` does.
 */
import { loadConfig } from "../../../server/config";
import { startBridge } from "../../../server/main";

const bridge = await startBridge({
  config: loadConfig(),
  ui: false,
  // As `worldline serve` does: this process's environment keeps no secret once started.
  sealEnvironment: true,
  retry: { maxRetries: 1, baseDelayMs: 10, maxDelayMs: 100 },
});
process.stdout.write(`READY ${bridge.url}\n`);

// For the error-policy test: a bug that throws where nothing catches, after the bridge is up.
if (process.env.ENTRY_FAULTS === "1") {
  void Promise.reject(new Error("entry fault: a promise nobody awaited"));
  setTimeout(() => {
    throw new Error("entry fault: a throw in a timer");
  }, 10);
}

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`[entry] ${signal}: stopping\n`);
  bridge.close().then(
    () => {
      process.stderr.write("[entry] closed\n");
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`[entry] close failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
};
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("SIGINT", () => stop("SIGINT"));
