import { ProviderError, type ProviderChunk, type ReasoningForm } from "../provider";
import { errorBodyOf, parseChunk } from "./chunk";
import { readContentParts } from "./content-parts";
import { readErrorChunk } from "./error-chunk";
import type { SseEvent } from "./sse";
import { ThinkTagSplitter } from "./think-tags";
import { ToolCallAssembler } from "./tool-call-deltas";
import { readUsage, type CacheForm } from "./usage";

/**
 * A Chat Completions stream, in any provider's dialect, as our step events. Each dialect is read by
 * its own normaliser (content parts, `<think>` tags, tool-call deltas, usage forms, error chunks); this
 * only routes the fields of choice 0 to them. Other choices are ignored: we never ask for n > 1, and a
 * server that sends them anyway must not interleave their text into ours.
 */
export async function* readChatStream(events: AsyncIterable<SseEvent>): AsyncGenerator<ProviderChunk> {
  const think = new ThinkTagSplitter();
  const calls = new ToolCallAssembler();
  let reasoningForm: ReasoningForm = "none";
  let cacheForm: CacheForm = "none";
  let finished = false;
  let done = false;
  let failed = false;
  for await (const event of events) {
    if (event.data.trim() === "[DONE]") {
      done = true;
      break;
    }
    if (event.event === "error") {
      // `event: error` (Groq) or llama.cpp's `error:` field: the body is the error, wrapped or bare.
      const error = readErrorChunk(errorBodyOf(event.data));
      failed = true;
      yield { type: "error", message: error.message, code: error.code, transient: error.transient };
      continue;
    }
    const chunk = parseChunk(event.data);
    if (chunk.usage) {
      const read = readUsage(chunk.usage);
      if (read.cacheForm !== "none") cacheForm = read.cacheForm;
      yield { type: "usage", ...read.usage };
    }
    if (chunk.error) {
      const error = readErrorChunk(chunk.error);
      failed = true;
      yield { type: "error", message: error.message, code: error.code, transient: error.transient };
    }
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      const delta = choice.delta;
      const reasoning = delta?.reasoning_content ?? delta?.reasoning;
      if (reasoning) {
        reasoningForm = delta?.reasoning_content ? "reasoning_content" : "reasoning";
        yield { type: "reasoning", delta: reasoning };
      }
      if (typeof delta?.content === "string" && delta.content) yield* think.feed(delta.content);
      if (Array.isArray(delta?.content)) {
        const parts = readContentParts(delta.content);
        if (parts.reasoning) {
          reasoningForm = "content_parts";
          yield { type: "reasoning", delta: parts.reasoning };
        }
        if (parts.text) yield* think.feed(parts.text);
      }
      if (delta?.refusal) yield { type: "refusal", delta: delta.refusal };
      for (const piece of calls.add(delta?.tool_calls ?? [])) yield { type: "tool_call", ...piece };
      if (choice.finish_reason) {
        finished = true;
        yield { type: "finish", reason: choice.finish_reason };
      }
    }
  }
  yield* think.end();
  if (think.sawTags) reasoningForm = "think_tags";
  yield { type: "forms", reasoning: reasoningForm, cache: cacheForm };
  // A stream that ends on an error chunk has said why; the step reports that, not a broken stream.
  if (!finished && !done && !failed) {
    throw new ProviderError(
      "The model stream ended before the model finished (no finish_reason and no [DONE]).",
      undefined,
      true,
      undefined,
      { kind: "stream" },
    );
  }
}
