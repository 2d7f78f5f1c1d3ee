import type { ModelConfig, ReasoningHistory } from "../config";
import type { ChatMessage } from "./provider";

/**
 * What differs between OpenAI-compatible providers that a real user hits, in one place:
 * - `reasoning_content` in history: DeepSeek answers 400 when an input message carries it; Kimi's thinking
 *   models need it kept on the assistant messages of a tool-calling turn; Qwen-style chat templates drop it
 *   from earlier turns anyway, and sending it would change how the previous turn renders (the prompt cache).
 * - `prompt_cache_key`: OpenAI groups a conversation's requests on one cache with it; servers that do not
 *   know it mostly ignore it, and the few that refuse unknown fields get the request again without it.
 */
export function reasoningHistoryFor(
  config: Pick<ModelConfig, "baseURL" | "model" | "reasoningHistory">,
): ReasoningHistory {
  if (config.reasoningHistory) return config.reasoningHistory;
  const where = `${config.baseURL ?? ""} ${config.model}`.toLowerCase();
  if (/moonshot|kimi/.test(where)) return "tool_calls";
  return "drop";
}

/**
 * The messages as this provider wants them: reasoning kept only where `policy` says, and sent back in
 * the form it arrived in (`reasoning_content`, a `reasoning` field, `<think>` tags at the start of the
 * content, or Mistral's thinking content part), which is the form the provider's template reads.
 */
export function withReasoningHistory(messages: readonly ChatMessage[], policy: ReasoningHistory): unknown[] {
  return messages.map((message) => {
    if (message.role !== "assistant") return message;
    const { reasoning_content: reasoning, reasoning_form: form, ...rest } = message;
    const keep =
      reasoning !== undefined && (policy === "all" || (policy === "tool_calls" && Boolean(message.tool_calls?.length)));
    if (!keep) return rest;
    switch (form) {
      case "reasoning":
        return { ...rest, reasoning };
      case "think_tags":
        return { ...rest, content: `<think>\n${reasoning}\n</think>\n\n${rest.content ?? ""}` };
      case "content_parts":
        return {
          ...rest,
          content: [
            { type: "thinking", thinking: [{ type: "text", text: reasoning }] },
            ...(rest.content ? [{ type: "text", text: rest.content }] : []),
          ],
        };
      default:
        return { ...rest, reasoning_content: reasoning };
    }
  });
}

/** A 400/422 that names a field we added: the server refuses unknown fields. */
export function refusesField(status: number | undefined, message: string, field: string): boolean {
  if (status !== 400 && status !== 422) return false;
  const text = message.toLowerCase();
  return (
    text.includes(field) ||
    /(unknown|unrecognized|unexpected|extra|additional)[^.]*(field|param|argument|propert|input)/.test(text)
  );
}
