import type { WorkspaceHost } from "../host";
import { imageRef } from "../protocol";
import * as store from "../store";
import type { CheckpointPort } from "./checkpoint-port";
import { DEFAULT_COMPACTION_THRESHOLD } from "./compaction";
import type { Context } from "./context";
import { DMailBox } from "./dmail";
import { runCompactionTurn, runTurn, type TurnResult } from "./loop";
import { BudgetGuard } from "../budgets";
import { IdleWatch } from "./idle-watch";
import { afterTurnMemory, recallForTurn, type RememberArgs } from "./memory-port";
import { createOpenAIProvider } from "./openai-provider";
import type { ChatProvider } from "./provider";
import { DEFAULT_RETRY_POLICY } from "./retry";
import { RunStateRecorder } from "./run-state";
import type { RuntimeDeps } from "./runtime-types";
import { gateToolsForPlanMode, PLAN_MODE_NOTE, planModeGate, TurnPlanMode } from "./plan-mode";
import { createSubagentRunner } from "./subagent";
import { orderSessionTools } from "./session-tools";
import { prepareTurnPrompt } from "./turn-context";
import { priceFor } from "./pricing";
import type { ToolLayers } from "./tool-layers";
import { createAgentTools, type TodoItem } from "./tools";
import type { PendingTurn } from "./turn-queue";
import { nameAfterFirstPrompt } from "./title-port";
import type { TurnEmitter } from "./turn-emitter";
import type { TurnRun } from "./turn-run";
import type { TurnHooks } from "./hooks-port";
import { NotificationHooks } from "./notification-hooks";

/** Most tasks end well before this; a runaway loop stops instead of burning tokens. */
export const DEFAULT_MAX_STEPS = 100;

/** What executing a turn needs from the runtime that owns it. */
export interface TurnExecutionEnv {
  deps: RuntimeDeps;
  /** Built from the environment's model config; undefined when only the Settings page names one. */
  provider: ChatProvider | undefined;
  checkpoints: CheckpointPort;
  tools: ToolLayers;
  context(sessionId: string): Promise<Context>;
  takeSteering(sessionId: string): string[];
  /** A read the turn needs, retried while the store is unreachable (the turn pauses, and says so). */
  read<T>(pending: PendingTurn, read: () => Promise<T>): Promise<T>;
}

export function emptyStats(): TurnResult["stats"] {
  return {
    output_tokens: 0,
    seconds: 0,
    min_tokens_per_second: 0,
    avg_tokens_per_second: 0,
    max_tokens_per_second: 0,
    input_tokens: null,
    cached_input_tokens: null,
    cost_usd: null,
  };
}

/**
 * Runs one turn: an external agent's, a compaction (`options.compact`), or the model loop with recall before and
 * memory after. `markRunning` writes the session's `running` status (see AgentRuntime.run).
 */
export async function executeTurn(
  env: TurnExecutionEnv,
  pending: PendingTurn,
  markRunning: () => void,
): Promise<TurnResult> {
  const { deps } = env;
  const { sessionId, turnId } = pending;
  // Read a moment ago by `prompt` when the turn started at once: one database round trip less before the first token.
  const session = pending.session ?? (await env.read(pending, () => deps.sessions.get(sessionId)));
  const idle = new IdleWatch(deps.config.turnIdleMs, () => {
    const text = `Interrupted: no model output and no running tool for ${idle.describe()} (WORLDLINE_TURN_IDLE_MS).`;
    deps.log.append(sessionId, { type: "notice", payload: { level: "warning", text, turnId } }, turnId);
    pending.controller.abort();
  });
  const emit: TurnEmitter = {
    turnId,
    event: (event) => {
      idle.observe(event);
      deps.log.append(sessionId, event, turnId);
    },
  };
  try {
    const result = await executeWith(env, pending, markRunning, { emit, idle, session });
    return idle.fired && result.outcome === "cancelled" ? { ...result, outcome: "interrupted" } : result;
  } finally {
    idle.stop();
  }
}

async function executeWith(
  env: TurnExecutionEnv,
  pending: PendingTurn,
  markRunning: () => void,
  { emit, idle, session }: { emit: TurnEmitter; idle: IdleWatch; session: NonNullable<PendingTurn["session"]> },
): Promise<TurnResult> {
  const { deps } = env;
  const { sessionId, turnId, prompt } = pending;
  const { signal } = pending.controller;
  const read = <T>(query: () => Promise<T>) => env.read(pending, query);
  // A new worktree's project setup runs first; a failed one was shown, and the turn goes on.
  if (deps.ready) await deps.ready(sessionId, signal);
  // Carried with the turn and kept current by the session's events: plan mode switched on mid-turn
  // stops writes from the next call on.
  const planMode = new TurnPlanMode(deps.log, sessionId, session.mode === "plan");
  void pending.done.finally(() => planMode.close());
  const planActive = () => planMode.active();
  if (session.agentCommand && deps.externalAgents) {
    nameAfterFirstPrompt(deps, pending, session.title);
    markRunning();
    const command = session.agentCommand;
    const prices = (await deps.prices?.().catch(() => undefined)) ?? {}; // Unreadable prices: no cost, still a turn.
    const host = sessionHost(deps, pending, session);
    return deps.externalAgents.runTurn({
      sessionId,
      workspace: session.workspace.path,
      host,
      command,
      turnId,
      prompt,
      emit,
      signal,
      gate: planModeGate(deps.gate, planActive),
      price: (model) => (model ? priceFor(model, prices) : undefined),
    });
  }
  const defaultModel = deps.defaultModel;
  const fallback = !deps.config.model && defaultModel ? await read(() => defaultModel()) : null;
  const provider = env.provider ?? (fallback ? createOpenAIProvider(fallback) : undefined);
  const model = session.model ?? deps.config.model?.model ?? fallback?.model;
  nameAfterFirstPrompt(deps, pending, session.title, provider && model ? { provider, model } : undefined);
  if (!provider || !model) return noModel(pending, emit);
  // A model the Settings page marks without image input would answer 400 or ignore them: say so instead.
  if (pending.options.images?.length && fallback?.model === model && fallback.capabilities?.images === false) {
    const message =
      `The model ${model} is marked without image input (Settings → Providers), so the images were not sent. ` +
      "Remove them, or choose a model that takes images.";
    return refuse(pending, emit, "model:no_vision", message);
  }
  const { compact } = pending.options;
  const host = sessionHost(deps, pending, session);
  const hooks = await deps.hooks?.forTurn({ sessionId, workspace: session.workspace.path, host, emit, signal });
  // A resumed turn (server/agent/run-state.ts) was submitted before its bridge stopped.
  const hookNote = compact || pending.resume ? { context: [] } : await promptHooks(hooks, prompt);
  if (hookNote.block !== undefined) {
    return refuse(pending, emit, "hook:blocked", `A UserPromptSubmit hook blocked this prompt: ${hookNote.block}`);
  }
  const setup = { pending, session, emit, planActive, markRunning, read, idle, hooks, hookContext: hookNote.context };
  const run = await buildTurnRun(env, setup, { provider, model, contextWindow: fallback?.contextWindow });
  if (compact) {
    markRunning();
    return runCompactionTurn(run, compact.focus);
  }
  const notifications = hooks
    ? new NotificationHooks(hooks, (listener) => deps.log.subscribe(sessionId, listener), turnId)
    : undefined;
  try {
    const result = await runTurn(run);
    // A completed turn's Stop hooks ran in the loop, where a block sends the turn on (server/agent/stop-hooks.ts).
    if (result.outcome !== "completed") await hooks?.run("Stop", { reason: result.outcome, stop_hook_active: false });
    // An idle turn's cancel is the watch's, not a person's: it ends waiting for one like any other.
    await notifications?.ended(idle.fired && result.outcome === "cancelled" ? "interrupted" : result.outcome);
    // Before turn.completed, so the memory and reflection events belong to the turn's stream.
    const { context, workspace } = run;
    const memoryInput = { sessionId, workspace, prompt, result, context, emit, provider, model, signal };
    await afterTurnMemory(deps.memory, memoryInput);
    return result;
  } finally {
    notifications?.unfollow();
  }
}

/** What executeTurn knows of a model turn before its TurnRun is built. */
interface TurnSetup {
  pending: PendingTurn;
  session: NonNullable<PendingTurn["session"]>;
  emit: TurnEmitter;
  planActive: () => boolean;
  markRunning: () => void;
  /** A read the turn needs, retried while the store is unreachable (cancelled with the turn). */
  read: <T>(query: () => Promise<T>) => Promise<T>;
  idle: IdleWatch;
  hooks?: TurnHooks;
  /** What SessionStart and UserPromptSubmit hooks added for the model (their `additionalContext`). */
  hookContext: string[];
}

/** SessionStart (first turn in this process) and UserPromptSubmit: the context they add, or the block. */
async function promptHooks(
  hooks: TurnHooks | undefined,
  prompt: string,
): Promise<{ block?: string; context: string[] }> {
  if (!hooks) return { context: [] };
  const start = await hooks.run("SessionStart", { source: "startup" });
  const submit = await hooks.run("UserPromptSubmit", { prompt });
  return { block: submit.block, context: [...start.context, ...submit.context] };
}

/**
 * The turn's TurnRun: its context, tools (the session's, the workspace's and the agent's own),
 * system prompt and recall, and the model's limits.
 */
async function buildTurnRun(
  env: TurnExecutionEnv,
  { pending, session, emit, planActive, markRunning, read, idle, hooks, hookContext }: TurnSetup,
  chosen: { provider: ChatProvider; model: string; contextWindow?: number },
): Promise<TurnRun> {
  const { deps } = env;
  const { sessionId, prompt } = pending;
  const { signal } = pending.controller;
  const workspace = session.workspace.path;
  const host = sessionHost(deps, pending, session);
  // Independent lookups (history, MCP/session tools, memories and skills, the workspace's prompt
  // files) run together: each is a few ms of database or disk, all between the prompt and the first token.
  const [context, workspaceTools, recall, workspacePrompt, prices] = await Promise.all([
    env.context(sessionId),
    env.tools.toolsFor({ sessionId, workspace, emit, signal, host }),
    recallForTurn(deps, { sessionId, workspace, prompt, host }),
    host.workspacePrompt(workspace),
    // Unreadable prices: no cost, still a turn.
    deps.prices?.().catch(() => ({})) ?? {},
  ]);
  const base = {
    sessionId,
    workspace,
    model: chosen.model,
    reasoning: pending.options.reasoning,
    provider: chosen.provider,
    gate: deps.gate,
    emit,
    retry: deps.retry ?? DEFAULT_RETRY_POLICY,
    contextWindow: chosen.contextWindow ?? deps.config.contextWindow,
    decorateToolContext: withHost(deps.decorateToolContext, host),
  };
  const dmail = new DMailBox(() => context.visibleCheckpointNumbers());
  const agentTools = createAgentTools({
    dmail,
    todos: { save: (items) => saveTodos(deps.db, sessionId, emit, items, read) },
    subagent: createSubagentRunner(base, workspaceTools),
    ...memoryAndSkillTools(deps, { sessionId, workspace, emit, hasSkills: Boolean(recall.skills), host }),
    plan: { active: planActive },
  });
  // Written only while the turn waits on a person, fenced on its claim, and only once the history
  // before the step is stored: a bridge that resumes the turn rebuilds its context from that history.
  const runState = new RunStateRecorder(async (json) => {
    if (!(await context.stored())) throw new Error("the turn's history before this step is not stored yet");
    await read(() => store.saveRunState(deps.db, pending.turnId, json, pending.claim));
  });
  const turnPrompt = prepareTurnPrompt({ context, workspace, workspacePrompt, recall, todos: session.todos });
  context.stage(...turnPrompt.before);
  return {
    ...base,
    prompt,
    images: pending.options.images,
    imagePreviews: pending.options.imagePreviews,
    context,
    systemPrompt: turnPrompt.systemPrompt,
    price: priceFor(chosen.model, prices),
    userContext: turnPrompt.userContext,
    tools: gateToolsForPlanMode(orderSessionTools(deps.tools(), workspaceTools, agentTools), planActive),
    // A plain question that a recalled memory answers skips tool planning (server/memory/ranking.ts); the
    // tools stay in the request, so it keeps the session's prefix.
    toolChoice: recall.direct ? "none" : undefined,
    modelNote: modelNote(session.mode === "plan", hookContext),
    hooks,
    signal,
    maxSteps: deps.maxSteps ?? DEFAULT_MAX_STEPS,
    turnNumber: pending.number,
    // A runner session's snapshots are taken on its runner (server/checkpoints, through its host).
    checkpoints: env.checkpoints,
    dmail,
    takeSteering: () => env.takeSteering(sessionId),
    compactionThreshold: deps.compactionThreshold ?? DEFAULT_COMPACTION_THRESHOLD,
    budget: new BudgetGuard({
      db: deps.db,
      sessionId,
      dailyUsd: deps.config.dailyBudgetUsd,
      sessionBudgetRaised: (budget_usd) => emit.event({ type: "session.updated", payload: { budget_usd } }),
      ask: deps.gate.askBudget
        ? ({ description, args, raise }) => {
            const onAsked = (approvalId: string) => runState.asked({ kind: "budget", approvalId, raise });
            const request = { sessionId, turnId: emit.turnId, description, args, signal, onAsked };
            return idle.hold(deps.gate.askBudget!(request));
          }
        : undefined,
    }),
    onRequestSent: markRunning,
    runState,
    resume: pending.resume,
  };
}

/** Plan mode's reminder and what hooks added, for the model only (the transcript shows the prompt alone). */
function modelNote(plan: boolean, hookContext: readonly string[]): string | undefined {
  const parts = [...(plan ? [PLAN_MODE_NOTE] : []), ...hookContext];
  return parts.length ? parts.join("\n\n") : undefined;
}

/** The session's host (this machine's or its runner's), fenced on the turn's claim. */
function sessionHost(
  deps: RuntimeDeps,
  pending: PendingTurn,
  session: NonNullable<PendingTurn["session"]>,
): WorkspaceHost {
  const epoch = pending.claim?.epoch;
  return deps.hosts.of(session.runner, epoch === undefined ? undefined : { sessionId: pending.sessionId, epoch });
}

/** Every tool of the turn works through the session's host (set first, so decorations see it too). */
function withHost(
  decorate: RuntimeDeps["decorateToolContext"],
  host: WorkspaceHost,
): RuntimeDeps["decorateToolContext"] {
  return (ctx) => {
    const hosted = { ...ctx, host };
    return decorate ? { ...decorate(hosted), host } : hosted;
  };
}

/** With no model configured the prompt is still recorded, with an error that says how to set one. */
function noModel(pending: PendingTurn, emit: TurnEmitter): TurnResult {
  const message =
    "No model is configured. Set WORLDLINE_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY for your provider) " +
    "and restart, or add one on the Settings page.";
  return refuse(pending, emit, "config:no_model", message);
}

/** A turn that cannot reach the model: the prompt is still recorded, with the reason as the turn's error. */
function refuse(pending: PendingTurn, emit: TurnEmitter, code: string, message: string): TurnResult {
  const { turnId, prompt, options } = pending;
  const images = (options.images ?? []).map((url, i) => imageRef(url, options.imagePreviews?.[i]));
  emit.event({
    type: "message.user",
    payload: { turnId, messageId: `msg_${turnId}`, text: prompt, ...(images.length ? { images } : {}) },
  });
  emit.event({ type: "turn.error", payload: { turnId, code, message } });
  return { outcome: "error", message, stats: emptyStats(), stopReason: "error" };
}

/** The `remember` tool (with memory) and the `skill` tool (when the workspace has skills). */
function memoryAndSkillTools(
  deps: RuntimeDeps,
  input: { sessionId: string; workspace: string; emit: TurnEmitter; hasSkills: boolean; host?: WorkspaceHost },
) {
  const { memory, skills } = deps;
  const { sessionId, workspace, emit, host } = input;
  return {
    remember: memory
      ? {
          remember: (args: RememberArgs) =>
            memory.remember({ ...args, sessionId, workspace, turnId: emit.turnId }, (event) => emit.event(event)),
        }
      : undefined,
    skills: skills && input.hasSkills ? { load: (name: string) => skills.load(workspace, name, host) } : undefined,
  };
}

async function saveTodos(
  db: store.Db,
  sessionId: string,
  emit: TurnEmitter,
  items: TodoItem[],
  durably: <T>(write: () => Promise<T>) => Promise<T>,
): Promise<void> {
  await durably(() => store.updateSession(db, sessionId, { todos: JSON.stringify(items) }));
  emit.event({ type: "todo.updated", payload: { items } });
}
