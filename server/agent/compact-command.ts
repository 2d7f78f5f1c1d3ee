import type { PromptOptions } from "./turn-queue";

/** `/compact` or `/compact <focus>`, as people type it. */
const COMPACT_TEXT = /^\/compact(?:\s+([\s\S]*))?$/;

/** How a compaction turn reads in the transcript and the turn list. */
export function compactPrompt(focus?: string): string {
  return focus ? `/compact ${focus}` : "/compact";
}

/**
 * A prompt's options with `/compact [focus]`, typed where people type text (the HTTP API, ACP's
 * slash command, a routine), turned into the `compact` option once at that edge: the runtime and
 * the loop read only `options.compact`, never the text.
 */
export function withTypedCommand(text: string, options: PromptOptions): PromptOptions {
  const match = COMPACT_TEXT.exec(text.trim());
  if (!match) return options;
  const focus = match[1]?.trim();
  return { ...options, compact: focus ? { focus } : {} };
}
