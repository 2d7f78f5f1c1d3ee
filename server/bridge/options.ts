import type { AgentTool, ChatProvider, RetryPolicy, RuntimeDeps } from "../agent";
import type { BridgeConfig } from "../config";
import type { LeaseOptions } from "../leases";
import type { NotifierOptions } from "../notify";

export interface BridgeOptions {
  config: BridgeConfig;
  /** Serve the Next.js pages (off for API-only tests and `worldline acp`). */
  ui?: boolean;
  dev?: boolean;
  provider?: ChatProvider;
  retry?: RetryPolicy;
  /** What kind of process this is, for its lease row: web (default), acp or run. */
  kind?: "web" | "acp" | "run";
  /** Lease timings; tests shorten them (server/leases). */
  lease?: Pick<LeaseOptions, "ttlMs" | "heartbeatMs">;
  /** The agent's tools; tests inject their own. */
  tools?: () => AgentTool[];
  /** Push timings (server/notify); tests shorten them. */
  push?: Pick<NotifierOptions, "timeoutMs" | "retryDelaysMs">;
  /** Loop limits and the agent's own tools (todo, task, send_dmail); see RuntimeDeps. */
  agent?: Pick<RuntimeDeps, "maxSteps" | "compactionThreshold">;
  /**
   * Drop the secrets from this process's environment once started (server/secrets/environment.ts):
   * set by the commands that run a bridge as their process (`worldline serve`, `run`, `acp`), not by
   * tests that start one inside the test runner.
   */
  sealEnvironment?: boolean;
}
