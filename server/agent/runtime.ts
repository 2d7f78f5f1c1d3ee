import { WorldlineError, errorMessage } from "../errors";
import type { EventLog } from "../sessions";
import * as store from "../store";
import { storeCheckpoints, type CheckpointPort } from "./checkpoint-port";
import { Context } from "./context";
import type { TurnResult } from "./loop";
import { createOpenAIProvider } from "./openai-provider";
import type { ChatProvider } from "./provider";
import type { PromptOptions, RuntimeDeps, StartedTurn } from "./runtime-types";
import type { SessionToolSource } from "./session-tools";
import { ToolLayers } from "./tool-layers";
import { COMPACT_COMMAND, emptyStats, executeTurn, type TurnExecutionEnv } from "./turn-execution";
import { TurnQueue, type PendingTurn } from "./turn-queue";

export type { ExternalAgentPort, PromptOptions, RuntimeDeps, StartedTurn } from "./runtime-types";
export { MAX_CONCURRENT_TURNS, MAX_QUEUED_TURNS_PER_SESSION } from "./turn-queue";

/**
 * A turn's `running` status row is written once its first model request is on its way, or
 * after this long if none is by then (MCP servers starting): the first token does not wait for it.
 */
const RUNNING_STATUS_DELAY_MS = 50;

/**
 * Contexts (whole histories) kept in memory between turns; past this the least recently used idle
 * one is dropped and re-read from the log on its next turn (a few ms). Most people work in a handful.
 */
export const MAX_CACHED_CONTEXTS = 32;

/**
 * Runs turns: one at a time per session (later prompts wait in a queue, server/agent/turn-queue.ts),
 * cancellable, steerable, each bound to the session's event log. Executing one is
 * server/agent/turn-execution.ts; the tools it gets are server/agent/tool-layers.ts.
 */
export class AgentRuntime {
  private readonly queue = new TurnQueue();
  /** In least-recently-used order (a use moves a context to the end). */
  private readonly contexts = new Map<string, Context>();
  /** When each session this runtime served was last used (a turn started or ended). */
  private readonly lastUsed = new Map<string, number>();
  private readonly layers: ToolLayers;
  private readonly env: TurnExecutionEnv;

  constructor(private readonly deps: RuntimeDeps) {
    const provider: ChatProvider | undefined =
      deps.provider ?? (deps.config.model ? createOpenAIProvider(deps.config.model) : undefined);
    const checkpoints: CheckpointPort = deps.checkpoints ?? storeCheckpoints(deps.db);
    this.layers = new ToolLayers(deps.tools, deps.sessionTools);
    this.env = {
      deps,
      provider,
      checkpoints,
      tools: this.layers,
      context: (sessionId) => this.context(sessionId),
      takeSteering: (sessionId) => this.queue.takeSteering(sessionId),
    };
  }

  isRunning(sessionId: string): boolean {
    return this.queue.active(sessionId) !== undefined;
  }

  runningTurn(sessionId: string): string | undefined {
    return this.queue.active(sessionId)?.turnId;
  }

  queuedTurns(sessionId: string): string[] {
    return this.queue.queued(sessionId).map((turn) => turn.turnId);
  }

  /**
   * Starts a turn, or queues it behind the running one. Resolves once it is
   * registered (its events may already be flowing). `/compact [focus]` compacts.
   */
  async prompt(sessionId: string, prompt: string, options: PromptOptions = {}): Promise<StartedTurn> {
    // Reading the session also catches its log up with other processes, which the limits check needs.
    const session = await this.deps.sessions.get(sessionId);
    this.queue.checkLimits(sessionId, () => Boolean(this.deps.log.runningElsewhere(sessionId)));
    const turn = await this.queue.reserve(() => store.createTurn(this.deps.db, sessionId, prompt, this.deps.ownerId));
    let settle!: (result: TurnResult) => void;
    const done = new Promise<TurnResult>((resolve) => (settle = resolve));
    const controller = new AbortController();
    const pending: PendingTurn = {
      sessionId,
      turnId: turn.id,
      number: turn.number,
      prompt,
      options,
      controller,
      done,
      settle,
    };
    const position = this.queue.admit(pending);
    if (position > 0) {
      this.append(sessionId, turn.id, { type: "turn.queued", payload: { turnId: turn.id, prompt, position } });
      return { turnId: turn.id, done, queued: true };
    }
    pending.session = session;
    this.run(pending);
    return { turnId: turn.id, done, queued: false };
  }

  /** A message for the running turn, injected before its next step; with no turn running it starts one. */
  async steer(sessionId: string, text: string): Promise<{ turnId: string; steered: boolean }> {
    const active = this.queue.active(sessionId);
    if (active && !COMPACT_COMMAND.test(active.prompt) && this.queue.steer(sessionId, text)) {
      return { turnId: active.turnId, steered: true };
    }
    const started = await this.prompt(sessionId, text);
    return { turnId: started.turnId, steered: false };
  }

  /** Compacts the session's context now (queued like a prompt when a turn runs). */
  compact(sessionId: string, focus?: string): Promise<StartedTurn> {
    return this.prompt(sessionId, focus?.trim() ? `/compact ${focus.trim()}` : "/compact");
  }

  /** Cancels the running turn, if any; resolves when it has stopped. Queued prompts still run after it. */
  async cancel(sessionId: string): Promise<boolean> {
    const active = this.queue.active(sessionId);
    if (!active) return false;
    active.controller.abort(new WorldlineError("turn:cancelled", "Cancelled by the user."));
    await active.done;
    return true;
  }

  /** Shutdown: queued turns are dropped (marked cancelled), running ones cancelled. */
  async cancelAll(): Promise<void> {
    const { dropped, running } = this.queue.drain();
    for (const pending of dropped) {
      const message = "The bridge shut down before this turn started.";
      const result: TurnResult = { outcome: "cancelled", message, stats: emptyStats() };
      await this.complete(pending, result);
      pending.settle(result);
    }
    for (const active of running) await this.cancel(active.sessionId);
  }

  /**
   * Runs `rewrite` (a rewind of history and files, server/checkpoints) while no turn runs:
   * refused during a turn, prompts meanwhile wait in the queue, the context is re-read after.
   */
  async rewriteHistory(sessionId: string, rewrite: () => Promise<void>): Promise<void> {
    this.queue.beginRewrite(sessionId);
    try {
      await rewrite();
    } finally {
      this.contexts.delete(sessionId);
      const next = this.queue.endRewrite(sessionId);
      if (next) this.run(next);
    }
  }

  /**
   * Gives one session extra tools (or replacements of workspace tools of the same
   * name) from the next turn on; `undefined` removes the layer of that owner.
   */
  setSessionTools(sessionId: string, owner: string, source: SessionToolSource | undefined): void {
    this.layers.set(sessionId, owner, source);
  }

  /** The in-memory context is dropped so the next turn re-reads the log (after a rewind elsewhere). */
  forgetContext(sessionId: string): void {
    this.contexts.delete(sessionId);
  }

  /**
   * Frees what the runtime holds for a session: its queue state and context, and on delete its
   * tool layers too (an idle session keeps them: an ACP client set them and may prompt again).
   * A session with a turn running or queued keeps everything (cancel it first).
   */
  forgetSession(sessionId: string, why: "deleted" | "idle"): boolean {
    if (!this.queue.release(sessionId)) return false;
    this.contexts.delete(sessionId);
    this.lastUsed.delete(sessionId);
    if (why === "deleted") this.layers.release(sessionId);
    return true;
  }

  /** Sessions with no turn running or queued whose last turn ended at least `idleMs` ago. */
  idleSessions(idleMs: number, now = Date.now()): string[] {
    return [...this.lastUsed].filter(([id, at]) => now - at >= idleMs && this.queue.idle(id)).map(([id]) => id);
  }

  /** How many sessions the runtime holds anything for (tests bound it). */
  heldSessions(): { states: number; contexts: number; layers: number; lastUsed: number } {
    const layers = this.layers.size();
    return { states: this.queue.sessions().length, contexts: this.contexts.size, layers, lastUsed: this.lastUsed.size };
  }

  /** Runs a turn that `queue` made active, then hands the session to its next queued turn. */
  private run(pending: PendingTurn): void {
    const { sessionId, turnId } = pending;
    this.lastUsed.set(sessionId, Date.now());
    void (async () => {
      // The status row (for session lists and restarts) is written once the first model request
      // is on its way (or soon, see RUNNING_STATUS_DELAY_MS): a database write less before the
      // first token. It lands before the turn ends.
      let running: Promise<void> | undefined;
      const markRunning = () => (running ??= this.setStatus(sessionId, "running"));
      const fallback = setTimeout(markRunning, RUNNING_STATUS_DELAY_MS);
      this.append(sessionId, turnId, {
        type: "turn.started",
        payload: { turnId, number: pending.number, prompt: pending.prompt },
      });
      let result: TurnResult;
      try {
        result = await executeTurn(this.env, pending, markRunning);
      } catch (error) {
        result = { outcome: "error", message: errorMessage(error), stats: emptyStats() };
      }
      clearTimeout(fallback);
      await markRunning();
      // The end-of-turn checkpoint belongs to the turn: its event precedes turn.completed.
      // A failed one is logged by the port (server/checkpoints); the turn's outcome stands.
      await this.env.checkpoints.turnEnded?.(sessionId).catch((error: unknown) => {
        console.error(`[worldline] turn-end checkpoint of ${sessionId} failed: ${errorMessage(error)}`);
      });
      await this.complete(pending, result);
      // Steering that came too late for this turn is not lost: it becomes the next prompt.
      const { late, next } = this.queue.finish(sessionId);
      this.lastUsed.set(sessionId, Date.now());
      if (next) this.run(next);
      else await this.setStatus(sessionId, "idle");
      pending.settle(result);
      if (late.length) await this.promptLate(sessionId, late.join("\n\n"));
    })();
  }

  /**
   * Steering that arrived after the turn's last step is sent as a prompt of its own; if that is
   * refused (limits, a deleted session) the person is told in the transcript, with the text.
   */
  private async promptLate(sessionId: string, text: string): Promise<void> {
    try {
      await this.prompt(sessionId, text);
    } catch (error) {
      console.error(`[worldline] late steering of session ${sessionId} could not start a turn: ${errorMessage(error)}`);
      const notice = `This message came after the turn ended and could not start a new one (${errorMessage(error)}); send it again: ${text}`;
      try {
        this.deps.log.append(sessionId, { type: "notice", payload: { level: "warning", text: notice } });
      } catch {
        // The session's log is closed (it was deleted): nobody is left to tell; logged above.
      }
    }
  }

  private async complete(pending: PendingTurn, result: TurnResult): Promise<void> {
    const { sessionId, turnId } = pending;
    this.append(sessionId, turnId, {
      type: "turn.completed",
      payload: {
        turnId,
        outcome: result.outcome,
        stats: result.stats,
        message: result.message,
        ...(result.stopReason ? { stopReason: result.stopReason } : {}),
      },
    });
    await store
      .finishTurn(this.deps.db, turnId, {
        status: result.outcome,
        // The stop reason rides with the stats, so `GET /sessions/:id` can say how the last turn ended.
        stats: JSON.stringify({ ...result.stats, stop_reason: result.stopReason ?? null }),
        error: result.message,
      })
      .catch(() => undefined); // the session may have been deleted meanwhile: its turn rows went with it
  }

  /** The session list's status row; the session may have been deleted meanwhile, which is fine. */
  private setStatus(sessionId: string, status: "running" | "idle"): Promise<void> {
    return this.deps.sessions.setStatus(sessionId, status).catch(() => undefined); // deleted meanwhile: no row to mark
  }

  private append(sessionId: string, turnId: string, event: Parameters<EventLog["append"]>[1]): void {
    this.deps.log.append(sessionId, event, turnId);
  }

  private async context(sessionId: string): Promise<Context> {
    let context = this.contexts.get(sessionId);
    if (context)
      this.contexts.delete(sessionId); // re-inserted below: now the most recently used
    else context = await Context.load(this.deps.db, sessionId);
    this.contexts.set(sessionId, context);
    for (const id of this.contexts.keys()) {
      if (this.contexts.size <= MAX_CACHED_CONTEXTS) break;
      if (id !== sessionId && !this.queue.active(id)) this.contexts.delete(id);
    }
    return context;
  }
}
