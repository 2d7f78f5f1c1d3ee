import { randomUUID } from "node:crypto";
import type { ChatMessage, ChatProvider, ChatRequest, ToolCallMessagePart } from "./provider";
import { ProviderError } from "./provider";
import { isRetryable, retryDelay, sleep, type RetryPolicy } from "./retry";
import { estimateTokens } from "./stats";
import type { TurnEmitter } from "./turn-emitter";

export interface StepResult {
  message: Extract<ChatMessage, { role: "assistant" }>;
  toolCalls: ToolCallMessagePart[];
  usage?: { inputTokens: number; outputTokens: number; cachedInputTokens?: number };
  outputTokens: number;
  /** From the first streamed token to the end of the stream. */
  seconds: number;
}

export interface StreamStepOptions {
  signal: AbortSignal;
  emit: TurnEmitter;
  policy: RetryPolicy;
  onToolCallReady?: (call: ToolCallMessagePart) => void;
  /** Filled with the text streamed so far by the current attempt, for a cancel mid-stream. */
  partial?: { text: string };
}

/**
 * One model call of a step, streamed: forwards text, reasoning and tool-call
 * argument deltas as events as they arrive; retries transient failures.
 * `onToolCallReady` fires as soon as a call's arguments are complete (the next
 * call starts or the stream ends), so tools can start before the stream is over.
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
    try {
      if (partial) partial.text = "";
      if (signal.aborted) throw signal.reason;
      return await streamOnce(
        provider,
        { ...request, signal: attemptController.signal },
        emit,
        onToolCallReady,
        partial,
      );
    } catch (error) {
      if (signal.aborted || !isRetryable(error) || attempt >= policy.maxRetries) throw error;
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
  emit: TurnEmitter,
  onToolCallReady?: (call: ToolCallMessagePart) => void,
  partial?: { text: string },
): Promise<StepResult> {
  const messageId = `msg_${randomUUID()}`;
  let text = "";
  let reasoning = "";
  let usage: StepResult["usage"];
  let firstTokenAt: number | undefined;
  const calls: { id: string; name: string; args: string; announced?: boolean }[] = [];
  const announce = (call: (typeof calls)[number]) => {
    call.announced = true;
    onToolCallReady?.({ id: call.id, type: "function", function: { name: call.name, arguments: call.args } });
  };

  for await (const chunk of provider.stream(request)) {
    firstTokenAt ??= chunk.type === "usage" || chunk.type === "finish" ? undefined : performance.now();
    switch (chunk.type) {
      case "text":
        text += chunk.delta;
        if (partial) partial.text = text;
        emit.event({
          type: "message.part.delta",
          payload: { turnId: emit.turnId, messageId, part: "text", delta: chunk.delta },
        });
        break;
      case "reasoning":
        reasoning += chunk.delta;
        emit.event({
          type: "message.part.delta",
          payload: { turnId: emit.turnId, messageId, part: "reasoning", delta: chunk.delta },
        });
        break;
      case "tool_call": {
        const call = (calls[chunk.index] ??= { id: chunk.id ?? `call_${randomUUID()}`, name: "", args: "" });
        if (chunk.id) call.id = chunk.id;
        if (chunk.name) call.name += chunk.name;
        call.args += chunk.argsDelta;
        // Providers may interleave the argument pieces of parallel calls, so a call
        // is ready once its arguments form a whole JSON object: no valid object is
        // a prefix of another, so nothing more can follow.
        if (!call.announced && chunk.argsDelta && call.name && isCompleteObject(call.args)) announce(call);
        break;
      }
      case "usage":
        usage = {
          inputTokens: chunk.inputTokens,
          outputTokens: chunk.outputTokens,
          ...(chunk.cachedInputTokens !== undefined ? { cachedInputTokens: chunk.cachedInputTokens } : {}),
        };
        break;
      case "finish":
        break;
    }
  }
  const toolCalls = toolCallsInOrder(calls).map((call) => ({
    id: call.id,
    type: "function" as const,
    function: { name: call.name, arguments: call.args },
  }));
  if (!text && !reasoning && toolCalls.length === 0) {
    throw new ProviderError("The model returned an empty response.", undefined, true, undefined, { kind: "empty" });
  }
  for (const call of toolCallsInOrder(calls)) if (!call.announced) announce(call);
  if (text || reasoning) emit.event({ type: "message.completed", payload: { turnId: emit.turnId, messageId } });
  return {
    message: {
      role: "assistant",
      content: text || null,
      ...(reasoning ? { reasoning_content: reasoning } : {}),
      ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
    },
    toolCalls,
    usage,
    outputTokens:
      usage?.outputTokens ?? estimateTokens(text + reasoning + toolCalls.map((c) => c.function.arguments).join("")),
    seconds: firstTokenAt === undefined ? 0 : (performance.now() - firstTokenAt) / 1000,
  };
}

function toolCallsInOrder<T>(calls: T[]): T[] {
  return calls.filter(Boolean);
}

function isCompleteObject(args: string): boolean {
  if (!args.trimEnd().endsWith("}")) return false;
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
