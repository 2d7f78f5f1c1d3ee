import { randomUUID } from "node:crypto";
import type {
  ChatMessage,
  ChatProvider,
  ChatRequest,
  ProviderChunk,
  ReasoningForm,
  StopReason,
  TokenUsage,
  ToolCallMessagePart,
} from "./provider";
import { ProviderError } from "./provider";
import { stopReasonOf } from "./provider/stop-reason";
import { isRetryable, retryDelay, sleep, type RetryPolicy } from "./retry";
import { estimateTokens } from "./stats";
import type { TurnEmitter } from "./turn-emitter";

export interface StepResult {
  message: Extract<ChatMessage, { role: "assistant" }>;
  /** The calls whose arguments are complete: the only ones that may run. */
  toolCalls: ToolCallMessagePart[];
  usage?: TokenUsage;
  outputTokens: number;
  /** From the first streamed token to the end of the stream. */
  seconds: number;
  /** How the stream ended: `completed`, `truncated` (output limit), `refused` or `content_filter`. */
  stop: Exclude<StopReason, "error">;
  /** Names of calls the output limit cut off mid-arguments: never run. */
  cutCalls: string[];
  /** Requests this step took (1 + retries). */
  attempts: number;
}

export interface StreamStepOptions {
  signal: AbortSignal;
  emit: TurnEmitter;
  policy: RetryPolicy;
  onToolCallReady?: (call: ToolCallMessagePart) => void;
  /** Filled with what the current attempt streamed so far, for a cancel or failure mid-stream. */
  partial?: PartialAnswer;
  /** The usage of an attempt that failed or was retried: billed all the same. */
  onFailedAttemptUsage?: (usage: TokenUsage) => void;
}

/** What an attempt streamed before it was cancelled or failed: kept in history as the model's message. */
export interface PartialAnswer {
  text: string;
  reasoning: string;
  /** The form the reasoning came in, once the stream said (a stream cut mid-way never does). */
  form: ReasoningForm;
}

export const emptyPartial = (): PartialAnswer => ({ text: "", reasoning: "", form: "none" });

/**
 * The assistant message for what was streamed: the answer as content, the reasoning kept apart in
 * the form it came in (history sends it back in that form, where the provider wants it).
 */
export function assistantMessage(
  content: string,
  reasoning: string,
  form: ReasoningForm,
  toolCalls: ToolCallMessagePart[],
): StepResult["message"] {
  return {
    role: "assistant",
    content: content || null,
    ...(reasoning ? { reasoning_content: reasoning } : {}),
    ...(reasoning && form !== "reasoning_content" && form !== "none" ? { reasoning_form: form } : {}),
    ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
  };
}

/** How much of unparseable tool-call arguments an error quotes. */
const ARGS_QUOTE_CHARS = 120;

/**
 * One model call of a step, streamed: forwards text, reasoning and tool-call argument deltas as
 * events as they arrive; retries what the policy in server/agent/provider/README.md says to retry.
 * `onToolCallReady` fires as soon as a call's arguments are complete (the next call starts or the
 * stream ends), so tools can start before the stream is over. Once one has, the step is never
 * retried: the tool ran, and a second request would run it again or lose it from history.
 */
export async function streamStep(
  provider: ChatProvider,
  request: Omit<ChatRequest, "signal">,
  options: StreamStepOptions,
): Promise<StepResult> {
  const { signal, emit, policy, onToolCallReady, partial } = options;
  for (let attempt = 0; ; attempt++) {
    // One signal per request: SDKs add abort listeners they don't always remove,
    // and a turn's signal lives for 100 steps.
    const attemptController = new AbortController();
    const forward = () => attemptController.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    const billed: { usage?: TokenUsage } = {};
    const started: string[] = [];
    const ready = (call: ToolCallMessagePart) => {
      started.push(call.function.name);
      onToolCallReady?.(call);
    };
    try {
      if (partial) Object.assign(partial, emptyPartial());
      if (signal.aborted) throw signal.reason;
      const result = await streamOnce(
        provider,
        { ...request, signal: attemptController.signal },
        { emit, onToolCallReady: ready, partial, billed },
      );
      return { ...result, attempts: attempt + 1 };
    } catch (error) {
      if (billed.usage) options.onFailedAttemptUsage?.(billed.usage);
      const ran = started.length > 0 && isRetryable(error);
      if (signal.aborted || !isRetryable(error) || ran || attempt >= policy.maxRetries) {
        if (attempt > 0 && error instanceof ProviderError) error.message += ` (after ${attempt + 1} attempts)`;
        if (ran && error instanceof ProviderError) {
          error.message += `. Not retried: the call to ${[...new Set(started)].join(", ")} had already run.`;
        }
        throw error;
      }
      const delayMs = retryDelay(error, attempt + 1, policy);
      emit.event({
        type: "turn.retry",
        payload: { turnId: emit.turnId, attempt: attempt + 1, delayMs, message: error.message },
      });
      await sleep(delayMs, signal);
    } finally {
      signal.removeEventListener("abort", forward);
    }
  }
}

async function streamOnce(
  provider: ChatProvider,
  request: ChatRequest,
  io: {
    emit: TurnEmitter;
    onToolCallReady?: (call: ToolCallMessagePart) => void;
    partial?: PartialAnswer;
    billed: { usage?: TokenUsage };
  },
): Promise<Omit<StepResult, "attempts">> {
  const { emit, onToolCallReady, partial, billed } = io;
  const messageId = `msg_${randomUUID()}`;
  let text = "";
  let reasoning = "";
  let refusal = "";
  let finish: string | undefined;
  let form: ReasoningForm = "none";
  let failure: { message: string; code?: string; transient: boolean } | undefined;
  let firstTokenAt: number | undefined;
  const calls: { id: string; name: string; args: string; announced?: boolean }[] = [];
  const announce = (call: (typeof calls)[number]) => {
    call.announced = true;
    onToolCallReady?.({ id: call.id, type: "function", function: { name: call.name, arguments: call.args } });
  };
  const answer = (delta: string) => {
    if (partial) partial.text += delta;
    emit.event({ type: "message.part.delta", payload: { turnId: emit.turnId, messageId, part: "text", delta } });
  };

  const finished = () => finish !== undefined;
  for await (const chunk of endingQuietlyAfterFinish(provider.stream(request), finished, request.signal)) {
    if (chunk.type === "text" || chunk.type === "reasoning" || chunk.type === "refusal" || chunk.type === "tool_call") {
      firstTokenAt ??= performance.now();
    }
    switch (chunk.type) {
      case "text":
        text += chunk.delta;
        answer(chunk.delta);
        break;
      case "refusal":
        // The refusal is the model's answer: shown and kept as its text.
        refusal += chunk.delta;
        answer(chunk.delta);
        break;
      case "reasoning":
        reasoning += chunk.delta;
        if (partial) partial.reasoning += chunk.delta;
        emit.event({
          type: "message.part.delta",
          payload: { turnId: emit.turnId, messageId, part: "reasoning", delta: chunk.delta },
        });
        break;
      case "tool_call": {
        const call = (calls[chunk.index] ??= { id: chunk.id ?? `call_${randomUUID()}`, name: "", args: "" });
        if (chunk.id) call.id = chunk.id;
        if (chunk.name && !call.name) call.name = chunk.name;
        call.args += chunk.argsDelta;
        // Providers may interleave the argument pieces of parallel calls, so a call
        // is ready once its arguments form a whole JSON object: no valid object is
        // a prefix of another, so nothing more can follow.
        if (!call.announced && chunk.argsDelta && call.name && isCompleteObject(call.args)) announce(call);
        break;
      }
      case "usage": {
        const { type: _type, ...usage } = chunk;
        billed.usage = usage;
        break;
      }
      case "finish":
        finish = chunk.reason;
        break;
      case "error":
        failure = chunk;
        break;
      case "forms":
        form = chunk.reasoning;
        if (partial) partial.form = chunk.reasoning;
        break;
    }
  }
  if (failure) {
    // A transient error before the model finished is a broken stream (retried); after a finish
    // reason, or a refusal of the request itself (tool_use_failed, invalid_request_error), it is final.
    const code = failure.code ? ` (${failure.code})` : "";
    throw new ProviderError(
      `The model provider reported an error${code}: ${failure.message}`,
      undefined,
      failure.transient && finish === undefined,
      undefined,
      { kind: "stream_error" },
    );
  }
  const stop = stopReasonOf(finish, refusal !== "" && text.trim() === "");
  const cutCalls: string[] = [];
  const toolCalls: ToolCallMessagePart[] = [];
  for (const call of calls.filter(Boolean)) {
    if (!call.name) throw finalError("The model sent a tool call without a name.");
    // No arguments at all mean `{}`, except when the output limit ended the step: the cut may have
    // come before the first of them.
    if (call.args.trim() === "" && stop !== "truncated") call.args = "{}";
    if (isCompleteObject(call.args)) {
      toolCalls.push({ id: call.id, type: "function", function: { name: call.name, arguments: call.args } });
    } else if (stop === "truncated") {
      cutCalls.push(call.name);
    } else {
      const quoted = call.args.length > ARGS_QUOTE_CHARS ? `${call.args.slice(0, ARGS_QUOTE_CHARS)}…` : call.args;
      throw finalError(`The model's call to ${call.name} has arguments that are not valid JSON: ${quoted}`);
    }
  }
  if (!text && !reasoning && !refusal && calls.length === 0 && stop === "completed") {
    // A finish reason ends the stream for good: the same request would be billed again for the same nothing.
    if (finish !== undefined) throw finalError(`The model returned an empty response (finish_reason: ${finish}).`);
    throw new ProviderError("The model returned an empty response.", undefined, true, undefined, { kind: "empty" });
  }
  for (const call of calls) if (call && !call.announced && !cutCalls.includes(call.name)) announce(call);
  if (text || reasoning || refusal) {
    emit.event({ type: "message.completed", payload: { turnId: emit.turnId, messageId } });
  }
  const content = text || refusal;
  return {
    message: assistantMessage(content, reasoning, form, toolCalls),
    toolCalls,
    usage: billed.usage,
    outputTokens:
      billed.usage?.outputTokens ??
      estimateTokens(content + reasoning + toolCalls.map((c) => c.function.arguments).join("")),
    seconds: firstTokenAt === undefined ? 0 : (performance.now() - firstTokenAt) / 1000,
    stop,
    cutCalls,
  };
}

/**
 * The provider's chunks, except that a connection that breaks after the finish reason ends them
 * quietly: the answer is whole (only the usage chunk or `[DONE]` is lost, so the usage stays unknown),
 * and asking again would bill the same answer twice.
 */
async function* endingQuietlyAfterFinish(
  chunks: AsyncIterable<ProviderChunk>,
  finished: () => boolean,
  signal: AbortSignal,
): AsyncGenerator<ProviderChunk> {
  try {
    yield* chunks;
  } catch (error) {
    if (!finished() || signal.aborted || !isRetryable(error)) throw error;
  }
}

/** A step that ended with a finish reason and cannot be used: never retried. */
function finalError(message: string): ProviderError {
  return new ProviderError(message, undefined, false, undefined, { kind: "malformed_stream" });
}

function isCompleteObject(args: string): boolean {
  if (!args.trimEnd().endsWith("}")) return false;
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    // not JSON (yet): more of the arguments are to come
    return false;
  }
}
