import { randomUUID } from "node:crypto";
import { imageRef, type ModelPrice, type StopReason, type TurnOutcome } from "../protocol";
import { errorMessage, WorldlineError } from "../errors";
import type { ToolContext } from "../tools/types";
import type { CheckpointPort } from "./checkpoint-port";
import { compactContext } from "./compaction";
import type { Context, HistoryRecord } from "./context";
import type { DMailBox } from "./dmail";
import { LOOP_WARNING, LoopGuard } from "./loop-guard";
import type { ChatProvider, ToolSpec } from "./provider";
import type { RetryPolicy } from "./retry";
import { StatsCollector } from "./stats";
import { streamStep } from "./stream-step";
import { StepTools, type CallResult } from "./tool-runner";
import type { AgentTool, ApprovalGate } from "./tools-port";
import type { TurnEmitter } from "./turn-emitter";
import { checkpoint, travelBack } from "./loop-checkpoints";

export interface TurnOptions {
  sessionId: string;
  workspace: string;
  model: string;
  prompt: string;
  /** Image URLs (`data:` URLs from ACP clients) sent with the prompt as content parts. */
  images?: string[];
  /** Thumbnails for the transcript's `message.user` event, by index of `images` (see server/protocol/images.ts). */
  imagePreviews?: (string | undefined)[];
  reasoning?: "on" | "off";
  provider: ChatProvider;
  context: Context;
  systemPrompt: string;
  /** The turn's `<context>` block (server/agent/turn-context.ts), appended to its user message for the model. */
  userContext?: { text: string; records: HistoryRecord[] };
  tools: AgentTool[];
  /** "none": the model answers without tools, which stay in the request so its prefix does not change. */
  toolChoice?: "none";
  gate: ApprovalGate;
  emit: TurnEmitter;
  signal: AbortSignal;
  retry: RetryPolicy;
  maxSteps: number;
  contextWindow: number;
  /** The turn's number in the session, for checkpoint rows. */
  turnNumber?: number;
  /** The model's price, for the turn's `cost_usd` (server/agent/pricing.ts). */
  price?: ModelPrice;
  /** Omitted for subagents: their steps are not checkpoints of the session. */
  checkpoints?: CheckpointPort;
  /** Present when `send_dmail` is enabled; checkpoint markers are shown to the model only then. */
  dmail?: DMailBox;
  /** Messages the user sent while the turn runs; injected before the next step. */
  takeSteering?: () => string[];
  /** Share of the window above which the context is compacted before a step; omitted = never. */
  compactionThreshold?: number;
  /**
   * Called once a step's model request is on its way (or as the step ends): for writes the
   * first token need not wait for (the runtime's `running` status row).
   */
  onRequestSent?: () => void;
  decorateToolContext?: (ctx: ToolContext) => ToolContext;
  /** Per-turn context for the model only (e.g. plan mode's reminder), sent after the prompt; the transcript shows the prompt alone. */
  modelNote?: string;
}

export interface TurnResult {
  outcome: TurnOutcome;
  message?: string;
  stats: ReturnType<StatsCollector["result"]>;
  /** How the last model step ended; absent when none did (cancelled before an answer). */
  stopReason?: StopReason;
}

/**
 * Writes staged before a step's model request (see `afterRequest`) wait at most this long for
 * the stream's first event; a crash before they land loses only what the event log also lost.
 */
const STAGED_WRITE_DELAY_MS = 25;

type StepOutcome = { kind: "continue" } | { kind: "stop"; outcome: TurnOutcome; message?: string };

/** What a turn remembers between its steps. */
interface TurnState {
  /** How the last model step ended. */
  stop?: StopReason;
  /** A cut-off answer was already continued once in this turn. */
  continued: boolean;
}

/** Sent (for the model only) after an answer the output limit cut off, once per turn. */
const CONTINUE_NOTE =
  "[Your previous answer was cut off at the output-token limit. Continue exactly where it stopped, without repeating it.]";

/** A turn: checkpoint, append the user message, then steps until the model answers without tool calls. */
export async function runTurn(options: TurnOptions): Promise<TurnResult> {
  const { emit, context, signal } = options;
  const stats = new StatsCollector(options.price);
  const state: TurnState = { continued: false };
  const result = (outcome: TurnOutcome, message?: string): TurnResult => ({
    outcome,
    message,
    stats: stats.result(),
    ...(state.stop ? { stopReason: state.stop } : {}),
  });
  const guard = new LoopGuard();
  let compactionFutileAt = -1;

  try {
    await checkpoint(options, 0, "turn");
    appendUser(options, options.prompt, options.images, options.userContext, options.modelNote);
    for (let step = 1; step <= options.maxSteps; step++) {
      if (signal.aborted) {
        await context.save();
        return result("cancelled");
      }
      injectSteering(options);
      if (needsCompaction(options) && context.length !== compactionFutileAt) {
        const compaction = await compact(options, "auto");
        // Nothing to summarise: don't try again until the context has changed.
        if (compaction.outcome === "skipped") compactionFutileAt = context.length;
      }
      await checkpoint(options, step, "step");
      const outcome = await runStep(options, stats, guard, step, state);
      if (outcome.kind === "continue") continue;
      // A message that arrived while the model wrote its final answer still gets a reply.
      if (outcome.outcome === "completed" && injectSteering(options)) continue;
      await context.save();
      return result(outcome.outcome, outcome.message);
    }
    await context.save();
    return result("max_steps", `Stopped after ${options.maxSteps} steps.`);
  } catch (error) {
    // Records staged before the failure still reach the history (a write error was reported already).
    await context.save().catch(() => undefined);
    if (signal.aborted) return result("cancelled");
    const code = error instanceof WorldlineError ? error.code : "agent:internal";
    emit.event({ type: "turn.error", payload: { turnId: emit.turnId, code, message: errorMessage(error) } });
    state.stop = "error";
    return result("error", errorMessage(error));
  }
}

/** A `/compact [focus]` turn: one summary, no model step. */
export async function runCompactionTurn(options: TurnOptions, focus: string | undefined): Promise<TurnResult> {
  const stats = new StatsCollector();
  try {
    const compaction = await compact(options, "manual", focus);
    const message = compaction.outcome === "skipped" ? "Nothing old enough to summarise yet." : undefined;
    return { outcome: "completed", message, stats: stats.result() };
  } catch (error) {
    // The checkpoint marker staged before the summary was asked for still reaches the history.
    await options.context.save().catch(() => undefined);
    if (options.signal.aborted) return { outcome: "cancelled", stats: stats.result() };
    const { emit } = options;
    emit.event({
      type: "turn.error",
      payload: { turnId: emit.turnId, code: "agent:compaction_failed", message: errorMessage(error) },
    });
    return { outcome: "error", message: errorMessage(error), stats: stats.result() };
  }
}

async function runStep(
  options: TurnOptions,
  stats: StatsCollector,
  guard: LoopGuard,
  step: number,
  state: TurnState,
): Promise<StepOutcome> {
  const { emit, context, signal } = options;
  emit.event({ type: "turn.stage", payload: { turnId: emit.turnId, stage: "planning" } });
  const tools = new StepTools(options);
  const partial = { text: "" };
  let answering = false;

  let result;
  const deferred = afterRequest(options, step);
  try {
    result = await streamStep(
      options.provider,
      {
        model: options.model,
        messages: [
          { role: "system", content: options.systemPrompt },
          ...context.messages({ checkpoints: Boolean(options.dmail) }),
        ],
        tools: options.tools.map(toSpec),
        toolChoice: options.toolChoice,
        reasoning: options.reasoning,
        cacheKey: options.sessionId,
      },
      {
        signal,
        policy: options.retry,
        partial,
        emit: {
          turnId: emit.turnId,
          event(event) {
            deferred.streamed();
            if (!answering && event.type === "message.part.delta" && event.payload.part === "text") {
              answering = true;
              emit.event({ type: "turn.stage", payload: { turnId: emit.turnId, stage: "answering" } });
            }
            emit.event(event);
          },
        },
        // Each tool starts as soon as its arguments are complete.
        onToolCallReady: (call) => tools.start(call),
        onFailedAttemptUsage: (usage) => stats.addFailedAttempt(usage),
      },
    );
  } catch (error) {
    // The stream broke or was cancelled after some tools had started: the
    // history still gets what the user saw and a result for every call made.
    const started = tools.startedCalls();
    const results = await tools.results(started);
    const text = partial.text;
    if (text || started.length) {
      context.stage(
        {
          kind: "message",
          message: { role: "assistant", content: text || null, ...(started.length ? { tool_calls: started } : {}) },
        },
        ...toolMessages(results),
      );
    }
    await context.save();
    if (signal.aborted) return { kind: "stop", outcome: "cancelled" };
    throw error;
  } finally {
    deferred.cancel();
  }

  stats.addStep(result.outputTokens, result.seconds);
  stats.addUsage(result.usage);
  const results = await tools.results(result.toolCalls);
  const verdict = guard.observe(result.toolCalls);
  if (verdict !== "ok" && results.length) {
    const last = results[results.length - 1];
    last.result = { ...last.result, output: `${last.result.output}\n\n${LOOP_WARNING}` };
  }
  // The assistant message and all its results are appended together, in call
  // order: a cancel can never leave a tool call without a result in history.
  const usage: HistoryRecord[] = result.usage
    ? [
        {
          kind: "usage",
          tokens: result.usage.inputTokens + result.usage.outputTokens,
          input: result.usage.inputTokens,
          cached: result.usage.cachedInputTokens,
          output: result.usage.outputTokens,
        },
      ]
    : [];
  await context.append({ kind: "message", message: result.message }, ...usage, ...toolMessages(results));
  emit.event({
    type: "context.usage",
    payload: {
      tokens: context.estimatedTokens(),
      window: options.contextWindow,
      inputTokens: result.usage?.inputTokens,
      outputTokens: result.usage?.outputTokens,
      cachedInputTokens: result.usage?.cachedInputTokens,
    },
  });

  state.stop = result.stop;
  if (signal.aborted) return { kind: "stop", outcome: "cancelled" };
  const ended = endOfStep(options, result, state);
  if (ended) return ended;
  const mail = options.dmail?.take();
  if (mail) {
    await travelBack(options, mail, step);
    return { kind: "continue" };
  }
  if (result.toolCalls.length === 0) return { kind: "stop", outcome: "completed" };
  const rejected = results.find(({ result: r }) => r.display?.rejected === true && !r.display?.feedback);
  if (rejected) return { kind: "stop", outcome: "rejected", message: "A tool call was rejected." };
  if (verdict === "stop") {
    const message = "Stopped: the model kept repeating the same tool call with the same arguments.";
    emit.event({ type: "notice", payload: { level: "warning", text: message, turnId: emit.turnId } });
    return { kind: "stop", outcome: "loop_detected", message };
  }
  return { kind: "continue" };
}

/**
 * A step the provider ended early (server/agent/provider/README.md): a cut-off text answer continues
 * once; a cut-off tool call never runs and the turn stops; a refusal or a content filter stops it.
 * Each gets a notice in the transcript. Undefined: the step ended normally.
 */
function endOfStep(
  options: TurnOptions,
  result: Awaited<ReturnType<typeof streamStep>>,
  state: TurnState,
): StepOutcome | undefined {
  const notice = (level: "info" | "warning", text: string) =>
    options.emit.event({ type: "notice", payload: { level, text, turnId: options.emit.turnId } });
  const attempts = result.attempts > 1 ? ` (after ${result.attempts} attempts)` : "";
  switch (result.stop) {
    case "completed":
      if (attempts) notice("info", `The model answered${attempts}.`);
      return undefined;
    case "refused":
      notice("warning", `The model refused to answer${attempts}.`);
      return { kind: "stop", outcome: "completed" };
    case "content_filter":
      notice("warning", `The provider's content filter stopped the answer${attempts}.`);
      return { kind: "stop", outcome: "completed" };
    case "truncated": {
      const limit = "The answer was cut off at the model's output-token limit";
      if (result.cutCalls.length) {
        notice("warning", `${limit}; the call to ${result.cutCalls.join(", ")} was incomplete and was not run.`);
        return { kind: "stop", outcome: "completed" };
      }
      const textOnly = Boolean(result.message.content) && result.toolCalls.length === 0;
      if (textOnly && !state.continued) {
        state.continued = true;
        notice("info", `${limit}; asking the model to continue.`);
        options.context.stage({ kind: "message", message: { role: "user", content: CONTINUE_NOTE } });
        return { kind: "continue" };
      }
      // Tool calls that completed before the cut ran: the turn goes on with their results.
      if (result.toolCalls.length) return undefined;
      notice("warning", `${limit}.`);
      return { kind: "stop", outcome: "completed" };
    }
  }
}

function needsCompaction(options: TurnOptions): boolean {
  if (options.compactionThreshold === undefined) return false;
  return options.context.estimatedTokens() >= options.compactionThreshold * options.contextWindow;
}

function compact(options: TurnOptions, reason: "auto" | "manual", focus?: string) {
  return compactContext({
    provider: options.provider,
    model: options.model,
    context: options.context,
    signal: options.signal,
    emit: options.emit,
    retry: options.retry,
    contextWindow: options.contextWindow,
    reason,
    focus,
    checkpoint: () => checkpoint(options, 0, "compaction"),
  });
}

/** Appends steering messages, if any; true when there were some. */
function injectSteering(options: TurnOptions): boolean {
  const messages = options.takeSteering?.() ?? [];
  for (const text of messages) appendUser(options, text);
  return messages.length > 0;
}

function appendUser(
  options: TurnOptions,
  text: string,
  images: readonly string[] = [],
  userContext?: TurnOptions["userContext"],
  note?: string,
): void {
  const { emit } = options;
  const refs = images.map((url, i) => imageRef(url, options.imagePreviews?.[i]));
  emit.event({
    type: "message.user",
    payload: { turnId: emit.turnId, messageId: `msg_${randomUUID()}`, text, ...(refs.length ? { images: refs } : {}) },
  });
  // The plan-mode note and the turn's <context> block are for the model; the transcript shows the prompt alone.
  const forModel = [text, note, userContext?.text].filter(Boolean).join("\n\n");
  const content = images.length
    ? [
        { type: "text" as const, text: forModel },
        ...images.map((url) => ({ type: "image_url" as const, image_url: { url } })),
      ]
    : forModel;
  // Written with the next save (while the step's model request is on its way, at the latest when the step ends).
  options.context.stage({ kind: "message", message: { role: "user", content } }, ...(userContext?.records ?? []));
}

/**
 * What the loop staged for the history since the last step (checkpoint markers, the user's
 * message) and the runtime's status row are written, and the step's snapshot is started, after
 * the step's model request, not before it: once the stream's first event has gone out to the
 * clients (setImmediate runs after the socket writes queued in microtasks), or after
 * STAGED_WRITE_DELAY_MS if the model is slow to answer. Each write costs ~0.5–1 ms of the event
 * loop, which otherwise sat between the prompt and the first token; the step's own `save` waits
 * for them before it ends.
 */
function afterRequest(options: TurnOptions, step: number): { streamed(): void; cancel(): void } {
  let done = false;
  let immediate: NodeJS.Immediate | undefined;
  const write = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    options.context.flush();
    options.onRequestSent?.();
  };
  const timer = setTimeout(write, STAGED_WRITE_DELAY_MS);
  // After the first step, the step's snapshot starts once the request is written (the check phase
  // after this turn of the event loop), not when a tool needs it: it overlaps the model's answer
  // (measured: ~3 ms less per step). The first step's answer is the turn's first token, which
  // the snapshot would delay by as much; there it waits for a tool or its delay.
  const capture = setImmediate(() => void (step > 1 && options.checkpoints?.captured?.(options.sessionId)));
  return {
    streamed: () => void (immediate ??= setImmediate(write)),
    // The step is over: its own save writes what is staged.
    cancel: () => {
      done = true;
      clearTimeout(timer);
      clearImmediate(capture);
      if (immediate) clearImmediate(immediate);
    },
  };
}

function toolMessages(results: readonly CallResult[]): HistoryRecord[] {
  return results.map(({ call, result }) => ({
    kind: "message" as const,
    message: { role: "tool" as const, tool_call_id: call.id, content: result.output },
  }));
}

function toSpec(tool: AgentTool): ToolSpec {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.jsonSchema },
  };
}
