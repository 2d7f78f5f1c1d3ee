import type { BridgeConfig } from "../config";
import { WorldlineError } from "../errors";
import type { EventLog, Sessions } from "../sessions";
import * as store from "../store";
import { Context } from "./context";
import { runTurn, type TurnResult } from "./loop";
import { createOpenAIProvider } from "./openai-provider";
import type { ChatProvider } from "./provider";
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry";
import { buildSystemPrompt } from "./system-prompt";
import type { AgentTool, ApprovalGate } from "./tools-port";

/** Most tasks end well before this; a runaway loop stops instead of burning tokens. */
export const DEFAULT_MAX_STEPS = 100;

export interface RuntimeDeps {
  db: store.Db;
  log: EventLog;
  sessions: Sessions;
  config: BridgeConfig;
  tools: () => AgentTool[];
  gate: ApprovalGate;
  /** Tests and print mode may inject a provider; otherwise built from the model config. */
  provider?: ChatProvider;
  retry?: RetryPolicy;
  maxSteps?: number;
}

interface ActiveTurn {
  turnId: string;
  controller: AbortController;
  done: Promise<TurnResult>;
}

export interface StartedTurn {
  turnId: string;
  done: Promise<TurnResult>;
}

/** Runs turns: one at a time per session, cancellable, each bound to the session's event log. */
export class AgentRuntime {
  private readonly active = new Map<string, ActiveTurn>();
  private readonly contexts = new Map<string, Context>();
  private provider: ChatProvider | undefined;

  constructor(private readonly deps: RuntimeDeps) {
    this.provider = deps.provider ?? (deps.config.model ? createOpenAIProvider(deps.config.model) : undefined);
  }

  isRunning(sessionId: string): boolean {
    return this.active.has(sessionId);
  }

  runningTurn(sessionId: string): string | undefined {
    return this.active.get(sessionId)?.turnId;
  }

  /** Starts a turn; resolves once it is registered (its events may already be flowing). */
  async prompt(sessionId: string, prompt: string, options: { reasoning?: "on" | "off" } = {}): Promise<StartedTurn> {
    if (this.active.has(sessionId)) {
      throw new WorldlineError("session:busy", "A turn is already running in this session; wait for it or cancel it.");
    }
    const session = await this.deps.sessions.get(sessionId);
    const { db, log } = this.deps;
    const turn = await store.createTurn(db, sessionId, prompt);
    const controller = new AbortController();
    const emit = { turnId: turn.id, event: (event: Parameters<EventLog["append"]>[1]) => log.append(sessionId, event, turn.id) };
    // Registered before the first await below, so a second prompt is refused.
    const entry: ActiveTurn = { turnId: turn.id, controller, done: Promise.resolve(undefined as never) };
    this.active.set(sessionId, entry);
    await this.deps.sessions.setStatus(sessionId, "running");
    log.append(sessionId, { type: "turn.started", payload: { turnId: turn.id, number: turn.number, prompt } }, turn.id);

    entry.done = (async (): Promise<TurnResult> => {
      let result: TurnResult;
      try {
        result = await this.execute(session, turn.id, prompt, options, controller.signal, emit);
      } catch (error) {
        result = { outcome: "error", message: error instanceof Error ? error.message : String(error), stats: emptyStats() };
      }
      log.append(
        sessionId,
        { type: "turn.completed", payload: { turnId: turn.id, outcome: result.outcome, stats: result.stats, message: result.message } },
        turn.id,
      );
      await store
        .finishTurn(db, turn.id, { status: result.outcome, stats: JSON.stringify(result.stats), error: result.message })
        .catch(() => undefined); // the session may have been deleted meanwhile
      this.active.delete(sessionId);
      await this.deps.sessions.setStatus(sessionId, "idle").catch(() => undefined);
      return result;
    })();
    return { turnId: turn.id, done: entry.done };
  }

  /** Cancels the running turn, if any; resolves when it has stopped. */
  async cancel(sessionId: string): Promise<boolean> {
    const entry = this.active.get(sessionId);
    if (!entry) return false;
    entry.controller.abort(new WorldlineError("turn:cancelled", "Cancelled by the user."));
    await entry.done;
    return true;
  }

  async cancelAll(): Promise<void> {
    await Promise.all([...this.active.keys()].map((id) => this.cancel(id)));
  }

  private async execute(
    session: Awaited<ReturnType<Sessions["get"]>>,
    turnId: string,
    prompt: string,
    options: { reasoning?: "on" | "off" },
    signal: AbortSignal,
    emit: { turnId: string; event: (event: Parameters<EventLog["append"]>[1]) => void },
  ): Promise<TurnResult> {
    const model = session.model ?? this.deps.config.model?.model;
    if (!this.provider || !model) {
      emit.event({ type: "message.user", payload: { turnId, messageId: `msg_${turnId}`, text: prompt } });
      const message =
        "No model is configured. Set WORLDLINE_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY for your provider) and restart, or add one on the Settings page.";
      emit.event({ type: "turn.error", payload: { turnId, code: "config:no_model", message } });
      return { outcome: "error", message, stats: emptyStats() };
    }
    return runTurn({
      sessionId: session.id,
      workspace: session.workspace.path,
      model,
      prompt,
      reasoning: options.reasoning,
      provider: this.provider,
      context: await this.context(session.id),
      systemPrompt: buildSystemPrompt({ workspace: session.workspace.path }),
      tools: this.deps.tools(),
      gate: this.deps.gate,
      emit,
      signal,
      retry: this.deps.retry ?? DEFAULT_RETRY_POLICY,
      maxSteps: this.deps.maxSteps ?? DEFAULT_MAX_STEPS,
      contextWindow: this.deps.config.contextWindow,
    });
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
