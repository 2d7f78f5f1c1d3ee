import { WorldlineError, errorMessage } from "../errors";
import { TurnFence } from "../leases";
import type { EventLog } from "../sessions";
import * as store from "../store";
import { storeCheckpoints, type CheckpointPort } from "./checkpoint-port";
import { Context, type ContextWriter } from "./context";
import type { TurnResult } from "./loop";
import { completeText } from "./memory-port";
import { createOpenAIProvider } from "./openai-provider";
import type { ChatProvider } from "./provider";
import type { PromptOptions, RuntimeDeps, StartedTurn } from "./runtime-types";
import type { SessionToolSource } from "./session-tools";
import { resumableTurnIds, takeOverWaitingTurns, type ResumableTurn } from "./take-over";
import { ToolLayers } from "./tool-layers";
import { emptyStats, executeTurn, type TurnExecutionEnv } from "./turn-execution";
import { TurnQueue, turnCapacity, type PendingTurn } from "./turn-queue";

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

/** A one-off model call (a commit message) is a short answer: a slow provider is not waited on past this. */
const COMPLETE_TIMEOUT_MS = 60_000;

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
  /** Status writes of ended turns that the store refused past the durable writer's retries, by turn id. */
  private readonly unsettled = new Map<string, () => Promise<boolean>>();
  /** Turns still finishing (status, claim release) after their queue slot was handed on: shutdown waits for them. */
  private readonly finishing = new Set<Promise<void>>();

  constructor(private readonly deps: RuntimeDeps) {
    const provider: ChatProvider | undefined =
      deps.provider ?? (deps.config.model ? createOpenAIProvider(deps.config.model) : undefined);
    const checkpoints: CheckpointPort = deps.checkpoints ?? storeCheckpoints(deps.db, deps.log);
    this.layers = new ToolLayers(deps.tools, deps.sessionTools);
    this.env = {
      deps,
      provider,
      checkpoints,
      tools: this.layers,
      context: (sessionId) => this.context(sessionId),
      takeSteering: (sessionId) => this.queue.takeSteering(sessionId),
      read: (pending, read) => this.read(pending, read),
    };
  }

  isRunning(sessionId: string): boolean {
    return this.queue.active(sessionId) !== undefined;
  }

  /** Turns running now and this bridge's capacity (WORLDLINE_MAX_TURNS), for /api/v1/health. */
  load(): { running: number; capacity: number } {
    return { running: this.queue.runningCount(), capacity: turnCapacity() };
  }

  runningTurn(sessionId: string): string | undefined {
    return this.queue.active(sessionId)?.turnId;
  }

  queuedTurns(sessionId: string): string[] {
    return this.queue.queued(sessionId).map((turn) => turn.turnId);
  }

  /**
   * One tool-less model call with the session's model (its own, else the configured or Settings'
   * default), outside any turn: a commit message (server/worktrees). Null when no model is set.
   */
  async completeFor(
    sessionModel: string | null,
    system: string,
    user: string,
    signal: AbortSignal,
    purpose: string,
  ): Promise<string | null> {
    const { deps } = this;
    const fallback = !deps.config.model && deps.defaultModel ? await deps.defaultModel() : null;
    const provider = this.env.provider ?? (fallback ? createOpenAIProvider(fallback) : undefined);
    const model = sessionModel ?? deps.config.model?.model ?? fallback?.model;
    if (!provider || !model) return null;
    return completeText(provider, model, system, user, signal, { purpose, timeoutMs: COMPLETE_TIMEOUT_MS });
  }

  /**
   * Starts a turn, or queues it behind the running one. Resolves once it is
   * registered (its events may already be flowing). `options.compact` compacts instead.
   */
  async prompt(sessionId: string, prompt: string, options: PromptOptions = {}): Promise<StartedTurn> {
    // Reading the session also catches its log up with other processes, which the limits check needs.
    const session = await this.deps.sessions.get(sessionId);
    this.queue.checkLimits(sessionId, () => Boolean(this.deps.log.runningElsewhere(sessionId)));
    // The claim (server/leases) makes the store the arbiter of which bridge runs the session's turns.
    const { turn, claim } = await this.queue.reserve(async () => {
      const claim = await this.deps.claims?.claim(sessionId);
      const turn = await store.durably(() => store.createTurn(this.deps.db, sessionId, prompt, claim?.epoch ?? 0));
      return { turn, claim };
    });
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
      claim,
    };
    pending.fence = this.fenceOf(pending);
    const position = this.queue.admit(pending);
    if (position > 0) {
      this.append(sessionId, turn.id, { type: "turn.queued", payload: { turnId: turn.id, prompt, position } });
      return { turnId: turn.id, done, queued: true };
    }
    pending.session = session;
    this.run(pending);
    return { turnId: turn.id, done, queued: false };
  }

  /**
   * Takes over turns that waited on a person when their bridge stopped, and goes on with them
   * here (server/agent/take-over.ts); the ids of every such turn, which the orphan sweep leaves waiting.
   */
  takeOverWaiting(live: string[]): Promise<Set<string>> {
    const { db, ownerId } = this.deps;
    if (!ownerId || !this.deps.claims) return resumableTurnIds(db, live);
    return takeOverWaitingTurns({ db, ownerId, start: (found, claim) => this.resume(found, claim) }, live);
  }

  /** A turn taken over from a bridge that stopped while it waited: it waits here, then goes on. */
  private async resume({ turn, state }: ResumableTurn, claim: store.Claim): Promise<void> {
    this.deps.claims?.adopted(claim);
    const { sessionId } = turn;
    const session = await this.deps.sessions.get(sessionId);
    let settle!: (result: TurnResult) => void;
    const done = new Promise<TurnResult>((resolve) => (settle = resolve));
    const controller = new AbortController();
    const pending: PendingTurn = {
      ...{ sessionId, turnId: turn.id, number: turn.number, prompt: turn.prompt, options: {} },
      ...{ controller, done, settle, claim, session, resume: state },
    };
    pending.fence = this.fenceOf(pending);
    const text = "The bridge running this turn stopped while it waited; this bridge took the turn over.";
    this.append(sessionId, turn.id, { type: "notice", payload: { level: "info", text, turnId: turn.id } });
    if (this.queue.admit(pending) === 0) this.run(pending);
  }

  /** The turn's writes hold only while its claim does; a lost claim stops the turn at once. */
  private fenceOf(pending: PendingTurn): TurnFence | undefined {
    const { claim, sessionId, turnId, controller } = pending;
    if (!claim) return undefined;
    return new TurnFence(sessionId, turnId, claim.epoch, (error) => {
      // Said once per turn, whichever write or heartbeat noticed first; the turn stops at once.
      console.error(`[worldline] ${error.message} (turn ${turnId})`);
      controller.abort(error);
    });
  }

  /** A message for the running turn, injected before its next step; with no turn running it starts one. */
  async steer(sessionId: string, text: string): Promise<{ turnId: string; steered: boolean }> {
    const active = this.queue.active(sessionId);
    if (active && !active.options.compact && this.queue.steer(sessionId, text)) {
      return { turnId: active.turnId, steered: true };
    }
    const started = await this.prompt(sessionId, text);
    return { turnId: started.turnId, steered: false };
  }

  /**
   * Cancels the running turn, if any; resolves when it has stopped. Queued prompts still run after
   * it, unless `dropQueued` (the session is being deleted): they end cancelled without starting.
   */
  async cancel(sessionId: string, options: { dropQueued?: boolean } = {}): Promise<boolean> {
    if (options.dropQueued) {
      for (const pending of this.queue.dropQueued(sessionId)) {
        const message = "The session was deleted before this turn started.";
        const result: TurnResult = { outcome: "cancelled", message, stats: emptyStats() };
        await this.complete(pending, result);
        pending.settle(result);
      }
    }
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
    // All at once: each turn ends within its own bound (an external agent's kill grace), not their sum.
    // The reason tells external agents not to wait for their cancel's answer (server/external-agents).
    const shutdown = new WorldlineError("bridge:gone", "The bridge is shutting down.");
    await Promise.all(
      running.map((active) => {
        active.controller.abort(shutdown);
        return active.done;
      }),
    );
    // A turn that just ended may still be releasing its claim: the store must outlive that.
    await Promise.allSettled(this.finishing);
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
    const finishing = (async () => {
      // The status row (for session lists and restarts) is written once the first model request
      // is on its way (or soon, see RUNNING_STATUS_DELAY_MS): a database write less before the
      // first token. It lands before the turn ends.
      let running: Promise<void> | undefined;
      const markRunning = () => (running ??= this.setStatus(pending, "running"));
      const fallback = setTimeout(markRunning, RUNNING_STATUS_DELAY_MS);
      // From here to its turn.completed, the turn's events, checkpoint rows and approval requests
      // are stored only while its claim holds (server/leases/fence.ts).
      const unfence = pending.fence && this.deps.log.fence(pending.fence);
      // A turn taken over started on the bridge that stopped.
      if (!pending.resume) {
        this.append(sessionId, turnId, {
          type: "turn.started",
          payload: { turnId, number: pending.number, prompt: pending.prompt },
        });
      }
      let result: TurnResult;
      try {
        (await this.read(pending, () => this.context(sessionId))).setWriter(this.writerFor(pending));
        result = await executeTurn(this.env, pending, markRunning);
      } catch (error) {
        result = { outcome: "error", message: errorMessage(error), stats: emptyStats() };
      }
      // A turn whose history or status could not be stored, or whose claim was taken: the cached
      // context may hold what the store does not; the next turn re-reads the stored history.
      if (result.outcome === "error") this.contexts.delete(sessionId);
      clearTimeout(fallback);
      await markRunning();
      // The end-of-turn checkpoint belongs to the turn: its event precedes turn.completed.
      // A failed one is logged by the port (server/checkpoints); the turn's outcome stands.
      await this.env.checkpoints.turnEnded?.(sessionId).catch((error: unknown) => {
        console.error(`[worldline] turn-end checkpoint of ${sessionId} failed: ${errorMessage(error)}`);
      });
      await this.complete(pending, result);
      unfence?.();
      // Steering that came too late for this turn is not lost: it becomes the next prompt.
      const { late, next } = this.queue.finish(sessionId);
      this.lastUsed.set(sessionId, Date.now());
      if (next) this.run(next);
      else {
        await this.setStatus(pending, "idle");
        // Only while nothing of the session started here meanwhile (a prompt during setStatus).
        if (pending.claim && this.queue.idle(sessionId)) await this.releaseClaim(pending.claim);
      }
      pending.settle(result);
      if (late.length) await this.promptLate(sessionId, late.join("\n\n"));
    })();
    this.finishing.add(finishing);
    void finishing.finally(() => this.finishing.delete(finishing));
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

  /**
   * Ends a turn: its status row first (fenced on its claim, through the durable writer, so a store
   * outage pauses here instead of leaving the turn "running"), then `turn.completed`. A bridge
   * whose claim was taken meanwhile (a sweep or takeover ended the turn) writes neither, and says so.
   */
  private async complete(pending: PendingTurn, result: TurnResult): Promise<void> {
    const { sessionId, turnId } = pending;
    const data = {
      status: result.outcome,
      // The stop reason rides with the stats, so `GET /sessions/:id` can say how the last turn ended.
      stats: JSON.stringify({ ...result.stats, stop_reason: result.stopReason ?? null }),
      error: result.message,
    };
    const write = () =>
      store.finishTurn(this.deps.db, turnId, data, pending.claim && { sessionId, epoch: pending.claim.epoch });
    try {
      await store.durably(write, this.writerFor(pending).durable);
    } catch (error) {
      if (store.isFenced(error)) return pending.fence?.lose(error);
      // Still failing after the durable writer's retries: the turn ends for its listeners now and its
      // status row is retried after each heartbeat (retryUnsettled), never left "running".
      console.error(`[worldline] status of turn ${turnId} not stored yet (${errorMessage(error)}); retrying later`);
      this.unsettled.set(turnId, write);
    }
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
  }

  /** Retries status rows of ended turns that could not be stored (called after each heartbeat). */
  async retryUnsettled(): Promise<void> {
    for (const [turnId, write] of this.unsettled) {
      try {
        await write();
        this.unsettled.delete(turnId);
      } catch (error) {
        if (!store.storeFault(error)) this.unsettled.delete(turnId); // fenced or gone: nothing left to store
        return;
      }
    }
  }

  /**
   * Stops turns whose claim was taken (a sweep by a bridge that judged this one dead while it could
   * not reach the database, or a takeover), at once and with a line in the log, instead of letting
   * them write (called after each heartbeat; a fenced write stops a turn the same way).
   */
  async stopFencedTurns(): Promise<void> {
    const claims = this.deps.claims;
    if (!claims) return;
    for (const sessionId of this.queue.sessions()) {
      const active = this.queue.active(sessionId);
      if (!active?.claim || !active.fence || (await claims.holds(active.claim))) continue;
      active.fence.lose();
    }
  }

  /**
   * A read the running turn needs (its history, its session row): retried like its writes while the
   * store is unreachable, so a short outage pauses the turn instead of failing it; a cancel stops it.
   */
  private read<T>(pending: PendingTurn, read: () => Promise<T>): Promise<T> {
    return store.durably(read, { ...this.writerFor(pending).durable, signal: pending.controller.signal });
  }

  /** How the turn's writes are made: fenced on its claim; a wait on the store is told in the transcript. */
  private writerFor(pending: PendingTurn): ContextWriter {
    const { sessionId, turnId } = pending;
    const notice = (text: string, level: "warning" | "info") =>
      this.append(sessionId, turnId, { type: "notice", payload: { level, text, turnId } });
    return {
      epoch: pending.claim?.epoch,
      durable: store.turnNotices(notice),
    };
  }

  private async releaseClaim(claim: store.Claim): Promise<void> {
    try {
      // The turn's last events are stored under the claim first: the next claim (this process's
      // next prompt too) raises the epoch, and its fence would refuse them.
      await this.deps.log.flush(claim.sessionId);
      await this.deps.claims?.release(claim);
    } catch (error) {
      // A claim left held only makes other bridges forward this session's prompts here.
      console.error(`[worldline] releasing the claim of session ${claim.sessionId} failed: ${errorMessage(error)}`);
    }
  }

  /**
   * The session list's status row, conditional on the turn's claim: a turn whose claim was lost
   * writes no status (the new holder's is the one that counts). The session may have been deleted
   * meanwhile, which is fine.
   */
  private async setStatus(pending: PendingTurn, status: "running" | "idle"): Promise<void> {
    if (pending.fence?.lost) return;
    try {
      await this.deps.sessions.setStatus(pending.sessionId, status, pending.claim);
    } catch (error) {
      if (store.isFenced(error)) pending.fence?.lose(error);
      // Otherwise deleted meanwhile: no row to mark.
    }
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
