/** A title is a glance: longer ones are cut here. */
export const TITLE_MAX_CHARS = 60;
/** Words of the prompt kept when no model names the session. */
const FALLBACK_WORDS = 6;

/** The prompt's first words, as a title ("Fix the failing login test when…"); null for an empty prompt. */
export function firstWordsTitle(prompt: string): string | null {
  const words = prompt
    .replace(/```[\s\S]*?(```|$)/g, " ") // a pasted block says little about the task
    .split(/\s+/)
    .filter(Boolean);
  if (words.length === 0) return null;
  let title = words.slice(0, FALLBACK_WORDS).join(" ");
  let cut = words.length > FALLBACK_WORDS;
  if (title.length > TITLE_MAX_CHARS) {
    title = title.slice(0, TITLE_MAX_CHARS - 1).trimEnd();
    cut = true;
  }
  title = capitalise(title.replace(/[.,;:!?]+$/, ""));
  return cut ? `${title}…` : title;
}

/**
 * The model's answer as a title: its first non-empty line without reasoning tags, a "Title:"
 * label, quotes, markdown or a final full stop; null when nothing usable is left.
 */
export function cleanModelTitle(answer: string): string | null {
  const text = answer.replace(/<think>[\s\S]*?(<\/think>|$)/gi, "");
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .find(Boolean);
  if (!line) return null;
  let title = line
    .replace(/^(session\s+)?title\s*:\s*/i, "")
    .replace(/^[#*_`\s]+|[*_`\s]+$/g, "")
    .replace(/[.。]+$/, "")
    .replace(/^["'“‘«]+|["'”’»]+$/g, "")
    .replace(/[.。]+$/, "")
    .trim();
  if (!title) return null;
  if (title.length > TITLE_MAX_CHARS) title = `${title.slice(0, TITLE_MAX_CHARS - 1).trimEnd()}…`;
  return capitalise(title);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
