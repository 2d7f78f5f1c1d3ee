import { WorldlineError } from "../errors";
import { imageRef } from "../protocol";
import type { EventLog, Session } from "../sessions";
import * as store from "../store";
import { storeCheckpoints, type CheckpointPort } from "./checkpoint-port";
import { DEFAULT_COMPACTION_THRESHOLD } from "./compaction";
import { Context } from "./context";
import { DMailBox } from "./dmail";
import { runCompactionTurn, runTurn, type TurnOptions, type TurnResult } from "./loop";
import { createOpenAIProvider } from "./openai-provider";
import type { ChatProvider } from "./provider";
import { DEFAULT_RETRY_POLICY } from "./retry";
import { afterTurnMemory, recallForTurn, type RememberArgs } from "./memory-port";
import { createSubagentRunner } from "./subagent";
import { readWorkspacePrompt, renderSystemPrompt } from "./system-prompt";
import { createAgentTools, type TodoItem } from "./tools";
import { layerTools, type SessionToolSource } from "./session-tools";
import type { AgentTool } from "./tools-port";
import type { TurnEmitter } from "./turn-emitter";
import type { PromptOptions, RuntimeDeps, StartedTurn } from "./runtime-types";

export type { ExternalAgentPort, PromptOptions, RuntimeDeps, StartedTurn } from "./runtime-types";

/** Most tasks end well before this; a runaway loop stops instead of burning tokens. */
export const DEFAULT_MAX_STEPS = 100;

/** Turns running at once across all sessions: each holds a model stream, tools and child processes; two cores go round only so far. */
export const MAX_CONCURRENT_TURNS = 8;

/** Prompts waiting behind a session's running turn: more is a stuck script, not a person typing. */
export const MAX_QUEUED_TURNS_PER_SESSION = 20;

/**
 * A turn's `running` status row is written once its first model request is on its way, or
 * after this long if none is by then (MCP servers starting): the first token does not wait for it.
 */
const RUNNING_STATUS_DELAY_MS = 50;

/** `/compact` or `/compact <focus>` as a prompt summarises the context instead of asking the model. */
const COMPACT_COMMAND = /^\/compact(?:\s+([\s\S]*))?$/;

interface PendingTurn {
  sessionId: string;
  turnId: string;
  number: number;
  prompt: string;
  options: PromptOptions;
  controller: AbortController;
  done: Promise<TurnResult>;
  settle: (result: TurnResult) => void;
  /** The session as read by `prompt`, for a turn that starts at once (a queued one re-reads it). */
  session?: Session;
}

interface SessionState {
  active?: PendingTurn;
  queue: PendingTurn[];
  steering: string[];
  /** A rewind is rewriting the history: prompts wait in the queue. */
  rewriting?: boolean;
}

/**
 * Runs turns: one at a time per session (later prompts wait in a queue),
 * cancellable, steerable, each bound to the session's event log.
 */
export class AgentRuntime {
  private readonly states = new Map<string, SessionState>();
  private readonly contexts = new Map<string, Context>();
  private readonly provider: ChatProvider | undefined;
  private readonly checkpoints: CheckpointPort;
  /** Per-session tool layers by owner (e.g. an ACP client's fs/terminal), applied after `deps.sessionTools`. */
  private readonly sessionLayers = new Map<string, Map<string, SessionToolSource>>();
  /** Prompts between the limit check and their start (the turn row is written in between). */
  private starting = 0;

  constructor(private readonly deps: RuntimeDeps) {
    this.provider = deps.provider ?? (deps.config.model ? createOpenAIProvider(deps.config.model) : undefined);
    this.checkpoints = deps.checkpoints ?? storeCheckpoints(deps.db);
  }

  isRunning(sessionId: string): boolean {
    return this.states.get(sessionId)?.active !== undefined;
  }

  runningTurn(sessionId: string): string | undefined {
    return this.states.get(sessionId)?.active?.turnId;
  }

  queuedTurns(sessionId: string): string[] {
    return (this.states.get(sessionId)?.queue ?? []).map((turn) => turn.turnId);
  }

  /**
   * Starts a turn, or queues it behind the running one. Resolves once it is
   * registered (its events may already be flowing). `/compact [focus]` compacts.
   */
  async prompt(sessionId: string, prompt: string, options: PromptOptions = {}): Promise<StartedTurn> {
    // Reading the session also catches its log up with other processes, which the limits check needs.
    const session = await this.deps.sessions.get(sessionId);
    this.checkTurnLimits(sessionId);
    this.starting += 1;
    const turn = await store.createTurn(this.deps.db, sessionId, prompt).finally(() => (this.starting -= 1));
    let settle!: (result: TurnResult) => void;
    const done = new Promise<TurnResult>((resolve) => (settle = resolve));
    const pending: PendingTurn = {
      sessionId,
      turnId: turn.id,
      number: turn.number,
      prompt,
      options,
      controller: new AbortController(),
      done,
      settle,
    };
    // Checked and set with no await in between, so two prompts can never both start.
    const state = this.state(sessionId);
    if (state.active || state.rewriting) {
      state.queue.push(pending);
      this.append(sessionId, turn.id, {
        type: "turn.queued",
        payload: { turnId: turn.id, prompt, position: state.queue.length },
      });
      return { turnId: turn.id, done, queued: true };
    }
    pending.session = session;
    this.start(pending);
    return { turnId: turn.id, done, queued: false };
  }

  /** Refuses a prompt that would pass MAX_QUEUED_TURNS_PER_SESSION or MAX_CONCURRENT_TURNS. */
  private checkTurnLimits(sessionId: string): void {
    const state = this.states.get(sessionId);
    if (state && state.queue.length >= MAX_QUEUED_TURNS_PER_SESSION) {
      throw new WorldlineError(
        "session:busy",
        `${MAX_QUEUED_TURNS_PER_SESSION} prompts are already waiting in this session; wait for them or cancel.`,
      );
    }
    if (state?.active || state?.rewriting) return;
    if (this.deps.log.runningElsewhere(sessionId)) {
      // Its events and approvals come from that process (server/sessions/event-log.ts, "Several processes").
      throw new WorldlineError(
        "session:busy",
        "A turn of this session is running in another Worldline process (worldline acp or worldline run); wait for it to finish or cancel it there.",
      );
    }
    const running = [...this.states.values()].filter((other) => other.active).length + this.starting;
    if (running >= MAX_CONCURRENT_TURNS) {
      throw new WorldlineError(
        "runtime:busy",
        `${MAX_CONCURRENT_TURNS} turns are already running across sessions; wait for one to finish.`,
      );
    }
  }

  /** A message for the running turn, injected before its next step; with no turn running it starts one. */
  async steer(sessionId: string, text: string): Promise<{ turnId: string; steered: boolean }> {
    const active = this.states.get(sessionId)?.active;
    if (active && !COMPACT_COMMAND.test(active.prompt)) {
      this.state(sessionId).steering.push(text);
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
    const active = this.states.get(sessionId)?.active;
    if (!active) return false;
    active.controller.abort(new WorldlineError("turn:cancelled", "Cancelled by the user."));
    await active.done;
    return true;
  }

  /** Shutdown: queued turns are dropped (marked cancelled), running ones cancelled. */
  async cancelAll(): Promise<void> {
    for (const [sessionId, state] of this.states) {
      for (const pending of state.queue.splice(0)) {
        const result: TurnResult = {
          outcome: "cancelled",
          message: "The bridge shut down before this turn started.",
          stats: emptyStats(),
        };
        await this.complete(pending, result);
        pending.settle(result);
      }
      state.steering.length = 0;
      if (state.active) await this.cancel(sessionId);
    }
  }

  /**
   * Runs `rewrite` (a rewind of history and files, server/checkpoints) while no turn runs:
   * refused during a turn, prompts meanwhile wait in the queue, the context is re-read after.
   */
  async rewriteHistory(sessionId: string, rewrite: () => Promise<void>): Promise<void> {
    const state = this.state(sessionId);
    if (state.active || state.rewriting) {
      throw new WorldlineError(
        "session:busy",
        "A turn is running in this session; cancel it or wait for it before rewinding.",
      );
    }
    state.rewriting = true;
    try {
      await rewrite();
    } finally {
      this.contexts.delete(sessionId);
      state.rewriting = false;
      const next = state.queue.shift();
      if (next) this.start(next);
    }
  }

  /**
   * Gives one session extra tools (or replacements of workspace tools of the same
   * name) from the next turn on; `undefined` removes the layer of that owner.
   */
  setSessionTools(sessionId: string, owner: string, source: SessionToolSource | undefined): void {
    let layers = this.sessionLayers.get(sessionId);
    if (!source) {
      layers?.delete(owner);
      if (layers?.size === 0) this.sessionLayers.delete(sessionId);
      return;
    }
    if (!layers) this.sessionLayers.set(sessionId, (layers = new Map()));
    layers.set(owner, source);
  }

  /** The in-memory context is dropped so the next turn re-reads the log (after a rewind elsewhere). */
  forgetContext(sessionId: string): void {
    this.contexts.delete(sessionId);
  }

  private start(pending: PendingTurn): void {
    const { sessionId, turnId } = pending;
    const state = this.state(sessionId);
    state.active = pending;
    void (async () => {
      // The status row (for session lists and restarts) is written once the first model request
      // is on its way (or soon, see RUNNING_STATUS_DELAY_MS): a database write less before the
      // first token. It lands before the turn ends.
      let running: Promise<void> | undefined;
      const markRunning = () => (running ??= this.deps.sessions.setStatus(sessionId, "running").catch(() => undefined));
      const fallback = setTimeout(markRunning, RUNNING_STATUS_DELAY_MS);
      this.append(sessionId, turnId, {
        type: "turn.started",
        payload: { turnId, number: pending.number, prompt: pending.prompt },
      });
      let result: TurnResult;
      try {
        result = await this.execute(pending, markRunning);
      } catch (error) {
        result = {
          outcome: "error",
          message: error instanceof Error ? error.message : String(error),
          stats: emptyStats(),
        };
      }
      clearTimeout(fallback);
      await markRunning();
      // The end-of-turn checkpoint belongs to the turn: its event precedes turn.completed.
      await this.checkpoints.turnEnded?.(sessionId).catch(() => undefined);
      await this.complete(pending, result);
      // Steering that came too late for this turn is not lost: it becomes the next prompt.
      const late = state.steering.splice(0);
      state.active = undefined;
      const next = state.queue.shift();
      if (next) this.start(next);
      else await this.deps.sessions.setStatus(sessionId, "idle").catch(() => undefined);
      pending.settle(result);
      if (late.length) await this.prompt(sessionId, late.join("\n\n")).catch(() => undefined);
    })();
  }

  private async complete(pending: PendingTurn, result: TurnResult): Promise<void> {
    const { sessionId, turnId } = pending;
    this.append(sessionId, turnId, {
      type: "turn.completed",
      payload: { turnId, outcome: result.outcome, stats: result.stats, message: result.message },
    });
    await store
      .finishTurn(this.deps.db, turnId, {
        status: result.outcome,
        stats: JSON.stringify(result.stats),
        error: result.message,
      })
      .catch(() => undefined); // the session may have been deleted meanwhile
  }

  /** Runs the turn; `markRunning` writes the session's `running` status (see `start`). */
  private async execute(pending: PendingTurn, markRunning: () => void): Promise<TurnResult> {
    const { sessionId, turnId, prompt } = pending;
    // Read a moment ago by `prompt` when the turn started at once: one database round trip less before the first token.
    const session = pending.session ?? (await this.deps.sessions.get(sessionId));
    const emit: TurnEmitter = { turnId, event: (event) => this.deps.log.append(sessionId, event, turnId) };
    if (session.agentCommand && this.deps.externalAgents) {
      markRunning();
      const { signal } = pending.controller;
      return this.deps.externalAgents.runTurn({
        sessionId,
        workspace: session.workspace.path,
        command: session.agentCommand,
        turnId,
        prompt,
        emit,
        signal,
        gate: this.deps.gate,
      });
    }
    const fallback = !this.deps.config.model && this.deps.defaultModel ? await this.deps.defaultModel() : null;
    const provider = this.provider ?? (fallback ? createOpenAIProvider(fallback) : undefined);
    const model = session.model ?? this.deps.config.model?.model ?? fallback?.model;
    if (!provider || !model) {
      const images = (pending.options.images ?? []).map((url, i) => imageRef(url, pending.options.imagePreviews?.[i]));
      emit.event({
        type: "message.user",
        payload: { turnId, messageId: `msg_${turnId}`, text: prompt, ...(images.length ? { images } : {}) },
      });
      const message =
        "No model is configured. Set WORLDLINE_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY for your provider) and restart, or add one on the Settings page.";
      emit.event({ type: "turn.error", payload: { turnId, code: "config:no_model", message } });
      return { outcome: "error", message, stats: emptyStats() };
    }
    const workspace = session.workspace.path;
    // Independent lookups (history, MCP/session tools, memories and skills, the workspace's prompt
    // files) run together: each is a few ms of database or disk, all between the prompt and the first token.
    const [context, workspaceTools, recall, workspacePrompt] = await Promise.all([
      this.context(sessionId),
      this.toolsFor({ sessionId, workspace, emit, signal: pending.controller.signal }),
      recallForTurn(this.deps, { sessionId, workspace, prompt }),
      readWorkspacePrompt(workspace),
    ]);
    const enabled = { todo: true, task: true, dmail: true, ...this.deps.agentTools };
    const base = {
      sessionId,
      workspace,
      model,
      reasoning: pending.options.reasoning,
      provider,
      gate: this.deps.gate,
      emit,
      retry: this.deps.retry ?? DEFAULT_RETRY_POLICY,
      contextWindow: fallback?.contextWindow ?? this.deps.config.contextWindow,
      decorateToolContext: this.deps.decorateToolContext,
    };
    const dmail = enabled.dmail ? new DMailBox(() => context.visibleCheckpointNumbers()) : undefined;
    const agentTools = createAgentTools({
      dmail,
      todos: enabled.todo ? { save: (items) => this.saveTodos(sessionId, emit, items) } : undefined,
      subagent: enabled.task ? createSubagentRunner(base, workspaceTools) : undefined,
      ...this.memoryAndSkillTools({ sessionId, workspace, emit, hasSkills: Boolean(recall.skills) }),
    });
    const state = this.state(sessionId);
    const systemPrompt =
      renderSystemPrompt(workspacePrompt, { workspace, skills: recall.skills, memories: recall.memories }) +
      recall.invokedSkill;
    const options: TurnOptions = {
      ...base,
      prompt,
      images: pending.options.images,
      imagePreviews: pending.options.imagePreviews,
      context,
      systemPrompt,
      // A plain question that a recalled memory answers skips tool planning (server/memory/ranking.ts).
      tools: recall.direct ? [] : [...workspaceTools, ...agentTools],
      signal: pending.controller.signal,
      maxSteps: this.deps.maxSteps ?? DEFAULT_MAX_STEPS,
      turnNumber: pending.number,
      checkpoints: this.checkpoints,
      dmail,
      takeSteering: () => state.steering.splice(0),
      compactionThreshold: this.deps.compactionThreshold ?? DEFAULT_COMPACTION_THRESHOLD,
      onRequestSent: markRunning,
    };
    const compact = COMPACT_COMMAND.exec(prompt.trim());
    if (compact) {
      markRunning();
      return runCompactionTurn(options, compact[1]?.trim() || undefined);
    }
    const result = await runTurn(options);
    // Before turn.completed, so the memory and reflection events belong to the turn's stream.
    await afterTurnMemory(this.deps.memory, {
      sessionId,
      workspace,
      prompt,
      result,
      context,
      emit,
      provider,
      model,
      signal: pending.controller.signal,
    });
    return result;
  }

  /** The `remember` tool (with memory) and the `skill` tool (when the workspace has skills). */
  private memoryAndSkillTools(input: { sessionId: string; workspace: string; emit: TurnEmitter; hasSkills: boolean }) {
    const { memory, skills } = this.deps;
    const { sessionId, workspace, emit } = input;
    return {
      remember: memory
        ? {
            remember: (args: RememberArgs) =>
              memory.remember({ ...args, sessionId, workspace, turnId: emit.turnId }, (event) => emit.event(event)),
          }
        : undefined,
      skills: skills && input.hasSkills ? { load: (name: string) => skills.load(workspace, name) } : undefined,
    };
  }

  /** Workspace tools with the session's layers; a source that fails is skipped with a notice, never ending the turn. */
  private async toolsFor(input: {
    sessionId: string;
    workspace: string;
    emit: TurnEmitter;
    signal: AbortSignal;
  }): Promise<AgentTool[]> {
    const sources = [
      ...(this.deps.sessionTools ? [this.deps.sessionTools] : []),
      ...(this.sessionLayers.get(input.sessionId)?.values() ?? []),
    ];
    let tools = this.deps.tools();
    for (const source of sources) {
      try {
        tools = layerTools(tools, [await source.tools({ ...input, tools })]);
      } catch (error) {
        const text = `Some tools are unavailable in this turn: ${error instanceof Error ? error.message : String(error)}`;
        input.emit.event({ type: "notice", payload: { level: "warning", text, turnId: input.emit.turnId } });
      }
    }
    return tools;
  }

  private async saveTodos(sessionId: string, emit: TurnEmitter, items: TodoItem[]): Promise<void> {
    await store.updateSession(this.deps.db, sessionId, { todos: JSON.stringify(items) });
    emit.event({ type: "todo.updated", payload: { items } });
  }

  private append(sessionId: string, turnId: string, event: Parameters<EventLog["append"]>[1]): void {
    this.deps.log.append(sessionId, event, turnId);
  }

  private state(sessionId: string): SessionState {
    let state = this.states.get(sessionId);
    if (!state) {
      state = { queue: [], steering: [] };
      this.states.set(sessionId, state);
    }
    return state;
  }

  private async context(sessionId: string): Promise<Context> {
    let context = this.contexts.get(sessionId);
    if (!context) {
      context = await Context.load(this.deps.db, sessionId);
      this.contexts.set(sessionId, context);
    }
    return context;
  }
}

function emptyStats(): TurnResult["stats"] {
  return { output_tokens: 0, seconds: 0, min_tokens_per_second: 0, avg_tokens_per_second: 0, max_tokens_per_second: 0 };
}
