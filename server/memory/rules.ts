import type { MemoryScope, MemoryType } from "../protocol";

/** What the post-turn decision would store. */
export interface MemoryCandidate {
  text: string;
  type: MemoryType;
  scope: MemoryScope;
  importance: number;
}

/** Stored text is capped: a memory is a line in the prompt, not a document. */
export const MEMORY_TEXT_MAX_CHARS = 500;

interface Rule {
  pattern: RegExp;
  type: MemoryType;
  importance: number;
  /** Keep only the captured group (the thing to remember), or the whole sentence. */
  capture?: boolean;
}

/**
 * The rules a memory decision starts from (and all of it when no model is set):
 * explicit requests to remember, stated preferences, standing instructions and
 * facts about the user. A turn none of them match stores nothing and costs nothing.
 */
const RULES: Rule[] = [
  {
    pattern: /\b(?:please\s+)?(?:remember|memori[sz]e|note|keep in mind)(?:\s+that|\s*:)\s+(.+)/i,
    type: "fact",
    importance: 4,
    capture: true,
  },
  { pattern: /\bfrom now on\b[, ]*(.+)/i, type: "preference", importance: 4 },
  {
    pattern: /\b(?:i|we)\s+(?:always|usually|generally)?\s*(?:prefer|like|want|use)\b.+/i,
    type: "preference",
    importance: 3,
  },
  { pattern: /\b(?:always|never|don't ever|do not ever)\s+\w+.+/i, type: "preference", importance: 3 },
  {
    pattern: /\bmy\s+(?:name|email|e-mail|timezone|time zone|role|github|username|handle|language|editor|os)\s+is\b.+/i,
    type: "fact",
    importance: 4,
  },
];

/** Workspace-specific when it talks about the project; otherwise it follows the user everywhere. */
const PROJECT_WORDS = /\b(this|the|our)\s+(project|repo|repository|codebase|workspace|app|service|package)\b|\bhere\b/i;

/** Something that looks like a credential is never remembered. */
const SECRET_LIKE =
  /\b(password|passwd|secret|token|api[_ -]?key|private key)\b|-----BEGIN|\b(sk|ghp|xox[bp])[-_][A-Za-z0-9]{8,}/i;

/** The rule-based decision: the first sentence of the prompt that matches a rule, or null. */
export function ruleCandidate(prompt: string): MemoryCandidate | null {
  if (prompt.trim().startsWith("/") || SECRET_LIKE.test(prompt)) return null;
  for (const sentence of sentences(prompt)) {
    for (const rule of RULES) {
      const match = rule.pattern.exec(sentence);
      if (!match) continue;
      const raw = rule.capture && match[1] ? match[1] : sentence;
      const text = clean(raw);
      if (text.length < 3) continue;
      return {
        text,
        type: rule.type,
        scope: PROJECT_WORDS.test(sentence) ? "workspace" : "global",
        importance: rule.importance,
      };
    }
  }
  return null;
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

function clean(text: string): string {
  const trimmed = text.trim().replace(/\s+/g, " ");
  const capped = trimmed.length > MEMORY_TEXT_MAX_CHARS ? `${trimmed.slice(0, MEMORY_TEXT_MAX_CHARS - 1)}…` : trimmed;
  return capped.charAt(0).toUpperCase() + capped.slice(1);
}

export function looksSecret(text: string): boolean {
  return SECRET_LIKE.test(text);
}
