import type { ChatMessage, ContentPart } from "./provider";

/**
 * How the history becomes the `messages` of a request, so that every chat template accepts it and every
 * request starts with the whole previous one (README.md, Prompt caching and cost):
 *
 * - No two consecutive messages share the user or assistant role. A user message that follows a user
 *   message (a prompt after a turn that failed before the model answered, a compaction summary followed by a
 *   kept prompt) is merged into it, blank line between. Strict templates (Gemma 3, as served by vLLM,
 *   llama.cpp `--jinja`, LM Studio) raise on two in a row.
 * - Consecutive `tool` messages stay separate: one per call is the OpenAI protocol, and the templates
 *   handle them (Qwen3 and DeepSeek V3 group them into one block, Llama 3.1 gives each its own `ipython`
 *   turn). A strict template without tool support (Gemma 3) is not used with tools at all.
 * - A checkpoint id travels inside the message it belongs to, never as a message of its own, and only
 *   when D-Mail is on: appended to the user message or tool result just before it (the request that
 *   follows a checkpoint always ends with one), or, after an assistant answer (the checkpoint at the start
 *   of a turn), put before the next user message. Either way the text of a message is fixed the first time
 *   it is sent, so later requests repeat it byte for byte.
 */

/** One entry of the conversation as the model sees it: a message, or a checkpoint between messages. */
export type WireEntry = { message: ChatMessage } | { checkpoint: number };

/** The text a model sees for a checkpoint (Kimi CLI's wording, which send_dmail's description names). */
export function checkpointMarkerText(number: number): string {
  return `<system>CHECKPOINT ${number}</system>`;
}

export function toWireMessages(entries: readonly WireEntry[], options: { checkpoints?: boolean } = {}): ChatMessage[] {
  const out: ChatMessage[] = [];
  /** Markers that follow an assistant message wait for the next user message. */
  let waiting: string[] = [];
  for (const entry of entries) {
    if ("checkpoint" in entry) {
      if (!options.checkpoints) continue;
      const marker = checkpointMarkerText(entry.checkpoint);
      const last = out[out.length - 1];
      if (last && (last.role === "user" || last.role === "tool") && waiting.length === 0) {
        out[out.length - 1] = appendText(last, marker);
      } else {
        waiting.push(marker);
      }
      continue;
    }
    let message = entry.message;
    if (waiting.length && message.role === "user") {
      message = prependText(message, waiting.join("\n"));
      waiting = [];
    }
    const last = out[out.length - 1];
    if (last && last.role === message.role && (message.role === "user" || message.role === "assistant")) {
      out[out.length - 1] = merge(last, message);
    } else {
      out.push(message);
    }
  }
  return out;
}

function appendText<M extends Extract<ChatMessage, { role: "user" | "tool" }>>(message: M, text: string): M {
  if (typeof message.content === "string") return { ...message, content: `${message.content}\n\n${text}` };
  return { ...message, content: inFirstTextPart(message.content, (first) => `${first}\n\n${text}`) };
}

function prependText(message: Extract<ChatMessage, { role: "user" }>, text: string): ChatMessage {
  if (typeof message.content === "string") return { ...message, content: `${text}\n\n${message.content}` };
  return { ...message, content: inFirstTextPart(message.content, (first) => `${text}\n\n${first}`) };
}

/** A prompt with images is one text part and image parts: markers join its text rather than adding parts. */
function inFirstTextPart(content: ContentPart[], edit: (text: string) => string): ContentPart[] {
  const at = content.findIndex((part) => part.type === "text");
  if (at === -1) return [{ type: "text", text: edit("").trim() }, ...content];
  return content.map((part, i) => (i === at && part.type === "text" ? { type: "text", text: edit(part.text) } : part));
}

function merge(first: ChatMessage, second: ChatMessage): ChatMessage {
  if (first.role === "user" && second.role === "user") {
    if (typeof first.content === "string" && typeof second.content === "string") {
      return { role: "user", content: `${first.content}\n\n${second.content}` };
    }
    return { role: "user", content: [...parts(first.content), ...parts(second.content)] };
  }
  if (first.role === "assistant" && second.role === "assistant") {
    const text = [first.content, second.content].filter(Boolean).join("\n\n");
    const calls = [...(first.tool_calls ?? []), ...(second.tool_calls ?? [])];
    return { role: "assistant", content: text || null, ...(calls.length ? { tool_calls: calls } : {}) };
  }
  return second;
}

function parts(content: string | ContentPart[]): ContentPart[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}
