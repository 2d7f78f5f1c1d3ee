import { compactPrompt, withTypedCommand, type AgentRuntime, type PromptOptions } from "../agent";
import { WorldlineError } from "../errors";
import type { OwnerLease } from "../leases";
import type { EventLog } from "../sessions";
import * as store from "../store";
import type { Rpc } from "./rpc";

export interface StartedRemotely {
  turnId: string;
  queued: boolean;
}

/**
 * Prompts, steering, compaction and cancel of a session, wherever its turn runs. A session whose
 * turn runs on another bridge of the deployment (its Turn row's owner, alive) gets them forwarded
 * to that bridge, which queues or steers as for its own tabs; otherwise they run here. Without
 * Redis (one machine) there is nothing to forward to and the runtime answers (a turn of
 * `worldline acp` next to the web bridge is refused as busy there).
 */
export class TurnRouter {
  constructor(
    private readonly deps: { db: store.Db; runtime: AgentRuntime; log: EventLog; lease: OwnerLease; rpc: Rpc | null },
  ) {
    const { rpc, runtime } = deps;
    if (!rpc) return;
    rpc.handle("turn.prompt", async (args) => {
      const started = await runtime.prompt(args.sessionId, args.text, args.options);
      return { turnId: started.turnId, queued: started.queued };
    });
    rpc.handle("turn.steer", (args) => runtime.steer(args.sessionId, args.text));
    rpc.handle("turn.cancel", (args) => runtime.cancel(args.sessionId, { dropQueued: args.dropQueued }));
  }

  /** A prompt typed as `/compact [focus]` compacts (withTypedCommand); everything after here reads the option. */
  prompt(sessionId: string, text: string, options: PromptOptions = {}): Promise<StartedRemotely> {
    return this.start(sessionId, text, withTypedCommand(text, options));
  }

  private async start(sessionId: string, text: string, options: PromptOptions): Promise<StartedRemotely> {
    const remote = await this.elsewhere(sessionId);
    if (remote) return remote.rpc.call(remote.owner, "turn.prompt", { sessionId, text, options });
    try {
      const started = await this.deps.runtime.prompt(sessionId, text, options);
      return { turnId: started.turnId, queued: started.queued };
    } catch (error) {
      // Another bridge claimed the session first, or its turn started since the look above (two
      // prompts at the same instant): that bridge queues this one.
      if (!(error instanceof WorldlineError) || error.code !== "session:busy" || !this.deps.rpc) throw error;
      const holder = claimHolder(error) ?? (await this.elsewhere(sessionId))?.owner;
      if (!holder || holder === this.deps.lease.id) throw error;
      return this.deps.rpc.call(holder, "turn.prompt", { sessionId, text, options });
    }
  }

  async steer(sessionId: string, text: string): Promise<{ turnId: string; steered: boolean }> {
    const remote = await this.elsewhere(sessionId);
    if (remote) return remote.rpc.call(remote.owner, "turn.steer", { sessionId, text });
    return this.deps.runtime.steer(sessionId, text);
  }

  /** Compacts the session's context now (queued like a prompt when a turn runs). */
  compact(sessionId: string, focus?: string): Promise<StartedRemotely> {
    const trimmed = focus?.trim() || undefined;
    return this.start(sessionId, compactPrompt(trimmed), { compact: trimmed ? { focus: trimmed } : {} });
  }

  /** `dropQueued`: the session is being deleted, so its queued prompts end too (see AgentRuntime.cancel). */
  async cancel(sessionId: string, options: { dropQueued?: boolean } = {}): Promise<boolean> {
    const remote = await this.elsewhere(sessionId);
    if (remote) return remote.rpc.call(remote.owner, "turn.cancel", { sessionId, ...options });
    return this.deps.runtime.cancel(sessionId, options);
  }

  /**
   * The turn running in the session: here, or in another process (another bridge of the
   * deployment, `worldline acp`, `worldline run`) as the session's log shows it.
   */
  async runningTurn(sessionId: string): Promise<string | null> {
    const here = this.deps.runtime.runningTurn(sessionId);
    if (here) return here;
    await this.deps.log.open(sessionId);
    return this.deps.log.runningElsewhere(sessionId);
  }

  /** The live bridge, other than this one, running the session's turn, and the way to it (team mode only). */
  private async elsewhere(sessionId: string): Promise<{ owner: string; rpc: Rpc } | null> {
    const { rpc } = this.deps;
    if (!rpc || this.deps.runtime.isRunning(sessionId)) return null;
    const owner = await store.runningTurnOwner(this.deps.db, sessionId);
    if (!owner || owner === this.deps.lease.id) return null;
    return (await this.deps.lease.isLive(owner)) ? { owner, rpc } : null;
  }
}

/** The live bridge holding the session's claim, from a refused claim (server/leases/claims.ts). */
function claimHolder(error: WorldlineError): string | null {
  const owner = (error.details as { owner?: unknown } | undefined)?.owner;
  return typeof owner === "string" ? owner : null;
}
