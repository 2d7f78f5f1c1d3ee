import { randomUUID } from "node:crypto";
import { imageRef, type StopReason, type TurnOutcome } from "../protocol";
import { errorMessage, WorldlineError } from "../errors";
import { afterRequest } from "./after-request";
import { compactContext } from "./compaction";
import { checkpoint, travelBack } from "./loop-checkpoints";
import { HOOK_BLOCK_STOP_AFTER, LOOP_WARNING, LoopGuard } from "./loop-guard";
import type { ToolSpec } from "./provider";
import { resumeStep } from "./resume-step";
import { recordStep, toolMessages } from "./step-record";
import type { RunState } from "./run-state";
import { StatsCollector } from "./stats";
import { stopHooksContinue } from "./stop-hooks";
import { assistantMessage, emptyPartial, streamStep, type StepResult } from "./stream-step";
import { StepTools, type CallResult } from "./tool-runner";
import type { AgentTool } from "./tools-port";
import type { TurnRun } from "./turn-run";

export interface TurnResult {
  outcome: TurnOutcome;
  message?: string;
  stats: ReturnType<StatsCollector["result"]>;
  /** How the last model step ended; absent when none did (cancelled before an answer). */
  stopReason?: StopReason;
}

type StepOutcome = { kind: "continue" } | { kind: "stop"; outcome: TurnOutcome; message?: string };

/** What a turn keeps between its steps. */
interface TurnProgress {
  stats: StatsCollector;
  guard: LoopGuard;
  /** How the last model step ended. */
  stop?: StopReason;
  /** A cut-off answer was already continued once in this turn. */
  continued: boolean;
  /** The context's length when compaction last found nothing to summarise: not tried again until it changes. */
  compactionFutileAt: number;
  /** Times a Stop hook sent this turn back to work (server/agent/stop-hooks.ts). */
  stopContinuations: number;
}

const BUDGET_STOP = "Stopped at a budget.";

/** Sent (for the model only) after an answer the output limit cut off, once per turn. */
const CONTINUE_NOTE =
  "[Your previous answer was cut off at the output-token limit. Continue exactly where it stopped, without repeating it.]";

/** A turn: checkpoint, append the user message, then steps until the model answers without tool calls. */
export async function runTurn(run: TurnRun): Promise<TurnResult> {
  const { emit, context, signal } = run;
  const progress: TurnProgress = {
    stats: new StatsCollector(run.price),
    guard: new LoopGuard(),
    continued: false,
    compactionFutileAt: -1,
    stopContinuations: 0,
  };
  const result = (outcome: TurnOutcome, message?: string): TurnResult => ({
    outcome,
    message,
    stats: progress.stats.result(),
    ...(progress.stop ? { stopReason: progress.stop } : {}),
  });

  try {
    let first = 1;
    if (run.resume) {
      const resumed = await resumeWaits(run, progress, run.resume);
      if (resumed.kind === "stop") {
        await context.save();
        return result(resumed.outcome, resumed.message);
      }
      first = resumed.next;
    } else {
      await checkpoint(run, 0, "turn");
      appendUser(run, run.prompt, run.images, run.userContext, run.modelNote);
    }
    for (let step = first; step <= run.maxSteps; step++) {
      if (signal.aborted) {
        await context.save();
        return result("cancelled");
      }
      injectSteering(run);
      if (needsCompaction(run) && context.length !== progress.compactionFutileAt) {
        const compaction = await compact(run, "auto");
        if (compaction.outcome === "skipped") progress.compactionFutileAt = context.length;
      }
      run.runState?.stepStarted(step);
      if ((await checkBudget(run, progress)) === "stop") {
        await context.save();
        return result("rejected", BUDGET_STOP);
      }
      await checkpoint(run, step, "step");
      const outcome = await runStep(run, progress, step);
      if (outcome.kind === "continue") continue;
      // A message that arrived while the model wrote its final answer still gets a reply.
      if (outcome.outcome === "completed" && injectSteering(run)) continue;
      if (outcome.outcome === "completed" && (await stopHooksContinue(run, progress.stopContinuations))) {
        progress.stopContinuations += 1;
        continue;
      }
      await context.save();
      return result(outcome.outcome, outcome.message);
    }
    await context.save();
    return result("max_steps", `Stopped after ${run.maxSteps} steps.`);
  } catch (error) {
    // Records staged before the failure still reach the history (a write error was reported already).
    await context.save().catch(() => undefined);
    if (signal.aborted) return result("cancelled");
    const code = error instanceof WorldlineError ? error.code : "agent:internal";
    emit.event({ type: "turn.error", payload: { turnId: emit.turnId, code, message: errorMessage(error) } });
    progress.stop = "error";
    return result("error", errorMessage(error));
  }
}

/** A compaction turn (`options.compact`): one summary, no model step. */
export async function runCompactionTurn(run: TurnRun, focus: string | undefined): Promise<TurnResult> {
  const stats = new StatsCollector();
  try {
    const compaction = await compact(run, "manual", focus);
    const message = compaction.outcome === "skipped" ? "Nothing old enough to summarise yet." : undefined;
    return { outcome: "completed", message, stats: stats.result() };
  } catch (error) {
    // The checkpoint marker staged before the summary was asked for still reaches the history.
    await run.context.save().catch(() => undefined);
    if (run.signal.aborted) return { outcome: "cancelled", stats: stats.result() };
    const { emit } = run;
    emit.event({
      type: "turn.error",
      payload: { turnId: emit.turnId, code: "agent:compaction_failed", message: errorMessage(error) },
    });
    return { outcome: "error", message: errorMessage(error), stats: stats.result() };
  }
}

/**
 * A turn taken over while it waited (server/agent/run-state.ts): the step it waited in finishes
 * once its requests are decided, then the loop goes on from the next step (from the same one
 * after a budget was allowed).
 */
async function resumeWaits(
  run: TurnRun,
  progress: TurnProgress,
  state: RunState,
): Promise<{ kind: "continue"; next: number } | Extract<StepOutcome, { kind: "stop" }>> {
  const resumed = await resumeStep(run, state);
  if (run.signal.aborted) return { kind: "stop", outcome: "cancelled" };
  if (resumed.kind === "budget") {
    if (resumed.allowed) return { kind: "continue", next: state.step };
    budgetStopped(run, progress);
    return { kind: "stop", outcome: "rejected", message: BUDGET_STOP };
  }
  const outcome = await finishStep(run, progress, state.step, resumed.result, resumed.results);
  if (outcome.kind === "continue" || (outcome.outcome === "completed" && injectSteering(run))) {
    return { kind: "continue", next: state.step + 1 };
  }
  return outcome;
}

async function runStep(run: TurnRun, progress: TurnProgress, step: number): Promise<StepOutcome> {
  const tools = new StepTools(run);
  const result = await streamWithTools(run, progress, step, tools);
  if (result === "cancelled") return { kind: "stop", outcome: "cancelled" };
  progress.stats.addStep(result.outputTokens, result.seconds);
  progress.stats.addUsage(result.usage);
  // A call may wait on a person now: the answer that made it is what a restart resumes from.
  await run.runState?.streamed(result.message);
  return finishStep(run, progress, step, result, await tools.results(result.toolCalls));
}

/** A step whose calls all have results: recorded, then whether the turn goes on. */
async function finishStep(
  run: TurnRun,
  progress: TurnProgress,
  step: number,
  result: StepResult,
  results: CallResult[],
): Promise<StepOutcome> {
  const { emit, signal } = run;
  const verdict = progress.guard.observe(result.toolCalls);
  if (verdict !== "ok" && results.length) {
    const last = results[results.length - 1];
    last.result = { ...last.result, output: `${last.result.output}\n\n${LOOP_WARNING}` };
  }
  await recordStep(run, result, results);

  progress.stop = result.stop;
  if (signal.aborted) return { kind: "stop", outcome: "cancelled" };
  const ended = endOfStep(run, result, progress);
  if (ended) return ended;
  const mail = run.dmail?.take();
  if (mail) {
    await travelBack(run, mail, step);
    return { kind: "continue" };
  }
  if (result.toolCalls.length === 0) return { kind: "stop", outcome: "completed" };
  const rejected = results.find(({ result: r }) => r.display?.rejected === true && !r.display?.feedback);
  if (rejected) return { kind: "stop", outcome: "rejected", message: "A tool call was rejected." };
  const everyCallBlocked = results.every(({ result: r }) => r.display?.blockedByHook !== undefined);
  if (progress.guard.allBlocked(everyCallBlocked)) {
    const message = `Stopped: hooks blocked every tool call in ${HOOK_BLOCK_STOP_AFTER} steps in a row. Check the workspace's hooks (the session page lists them).`;
    emit.event({ type: "notice", payload: { level: "warning", text: message, turnId: emit.turnId } });
    return { kind: "stop", outcome: "loop_detected", message };
  }
  if (verdict === "stop") {
    const message = "Stopped: the model kept repeating the same tool call with the same arguments.";
    emit.event({ type: "notice", payload: { level: "warning", text: message, turnId: emit.turnId } });
    return { kind: "stop", outcome: "loop_detected", message };
  }
  return { kind: "continue" };
}

/**
 * The step's model call, its tools starting as their arguments complete. A stream that broke or
 * was cancelled still leaves in the history what the user saw (text and reasoning) and a result for
 * every call made; then a cancel is `"cancelled"` and anything else is thrown.
 */
async function streamWithTools(
  run: TurnRun,
  progress: TurnProgress,
  step: number,
  tools: StepTools,
): Promise<StepResult | "cancelled"> {
  const { emit, context, signal } = run;
  emit.event({ type: "turn.stage", payload: { turnId: emit.turnId, stage: "planning" } });
  const partial = emptyPartial();
  let answering = false;
  const deferred = afterRequest(run, step);
  try {
    return await streamStep(
      run.provider,
      {
        model: run.model,
        messages: [
          { role: "system", content: run.systemPrompt },
          ...context.messages({ checkpoints: Boolean(run.dmail) }),
        ],
        tools: run.tools.map(toSpec),
        toolChoice: run.toolChoice,
        reasoning: run.reasoning,
        cacheKey: run.sessionId,
      },
      {
        signal,
        policy: run.retry,
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
        onToolCallReady: (call) => tools.start(call),
        onFailedAttemptUsage: (usage) => progress.stats.addFailedAttempt(usage),
      },
    );
  } catch (error) {
    const started = tools.startedCalls();
    const results = await tools.results(started);
    const { text, reasoning, form } = partial;
    if (text || reasoning || started.length) {
      context.stage(
        { kind: "message", message: assistantMessage(text, reasoning, form, started) },
        ...toolMessages(results),
      );
    }
    await context.save();
    if (signal.aborted) return "cancelled";
    throw error;
  } finally {
    deferred.cancel();
  }
}

/**
 * A step the provider ended early (server/agent/provider/README.md): a cut-off text answer continues
 * once; a cut-off tool call never runs and the turn stops; a refusal or a content filter stops it.
 * Each gets a notice in the transcript. Undefined: the step ended normally.
 */
function endOfStep(run: TurnRun, result: StepResult, progress: TurnProgress): StepOutcome | undefined {
  const { emit } = run;
  const notice = (level: "info" | "warning", text: string) =>
    emit.event({ type: "notice", payload: { level, text, turnId: emit.turnId } });
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
      const limit = `The answer was cut off at the model's output-token limit${attempts}`;
      if (result.cutCalls.length) {
        notice("warning", `${limit}; the call to ${result.cutCalls.join(", ")} was incomplete and was not run.`);
        return { kind: "stop", outcome: "completed" };
      }
      const textOnly = Boolean(result.message.content) && result.toolCalls.length === 0;
      if (textOnly && !progress.continued) {
        progress.continued = true;
        notice("info", `${limit}; asking the model to continue.`);
        run.context.stage({ kind: "message", message: { role: "user", content: CONTINUE_NOTE } });
        return { kind: "continue" };
      }
      // Tool calls that completed before the cut ran: the turn goes on with their results.
      if (result.toolCalls.length) {
        if (attempts) notice("info", `The model answered${attempts}.`);
        return undefined;
      }
      notice("warning", `${limit}.`);
      return { kind: "stop", outcome: "completed" };
    }
  }
}

/** A step past a budget does not start: the turn waits on a person, or stops (`stop_reason: "budget"`). */
async function checkBudget(run: TurnRun, progress: TurnProgress): Promise<"go" | "stop"> {
  if (!run.budget) return "go";
  const spent = progress.stats.result();
  const tokens = (spent.input_tokens ?? 0) + spent.output_tokens;
  const verdict = await run.budget.beforeStep({ usd: spent.cost_usd ?? null, tokens });
  if (verdict === "stop") budgetStopped(run, progress);
  return verdict;
}

function budgetStopped(run: TurnRun, progress: TurnProgress): void {
  progress.stop = "budget";
  run.emit.event({
    type: "notice",
    payload: { level: "warning", text: "Stopped: going past the budget was rejected.", turnId: run.emit.turnId },
  });
}

function needsCompaction(run: TurnRun): boolean {
  if (run.compactionThreshold === undefined) return false;
  return run.context.estimatedTokens() >= run.compactionThreshold * run.contextWindow;
}

function compact(run: TurnRun, reason: "auto" | "manual", focus?: string) {
  return compactContext(run, { reason, focus, checkpoint: () => checkpoint(run, 0, "compaction") });
}

/** Appends steering messages, if any; true when there were some. */
function injectSteering(run: TurnRun): boolean {
  const messages = run.takeSteering?.() ?? [];
  for (const text of messages) appendUser(run, text);
  return messages.length > 0;
}

function appendUser(
  run: TurnRun,
  text: string,
  images: readonly string[] = [],
  userContext?: TurnRun["userContext"],
  note?: string,
): void {
  const { emit } = run;
  const refs = images.map((url, i) => imageRef(url, run.imagePreviews?.[i]));
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
  run.context.stage({ kind: "message", message: { role: "user", content } }, ...(userContext?.records ?? []));
}

function toSpec(tool: AgentTool): ToolSpec {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.jsonSchema },
  };
}
