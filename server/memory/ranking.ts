/**
 * A small relevance ranking for recall: shared content words between the prompt
 * and a memory, weighted by the memory's importance, with a light bias to recent
 * ones. Enough for the handful-to-thousands of memories one user keeps; no index.
 */

/** Words too common to say anything about relevance. */
const STOPWORDS = new Set(
  (
    "a an the and or but if then else of to in on at by for with from as is are was were be been being am do does did done " +
    "have has had i me my mine we our ours you your yours he she it its they them their this that these those there here " +
    "what which who whom whose when where why how can could should would will shall may might must not no yes so than too " +
    "very just about into over under again also any all some each more most other such only own same s t now please tell " +
    "know let lets us make get got use using used want need like"
  ).split(" "),
);

/** A memory must share this much of the question's content words to count as answering it. */
export const DIRECT_ANSWER_MIN_COVERAGE = 0.6;

export interface Rankable {
  text: string;
  importance: number;
  createdAt: Date;
}

/** Lower-cased content words, with a crude plural/verb-s strip so "tests" meets "test". */
export function contentWords(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_.-]*/gu) ?? [];
  return [
    ...new Set(
      words
        .map((word) => word.replace(/[.-]+$/, ""))
        .filter((word) => word.length > 1 && !STOPWORDS.has(word))
        .map(stem),
    ),
  ];
}

function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

export interface Scored<T> {
  item: T;
  score: number;
  /** Share of the query's content words the memory contains (0..1). */
  coverage: number;
}

/**
 * Memories that share at least one content word with the query, best first.
 * Importance (1..5) and recency break ties; with no query words nothing matches.
 */
export function rankMemories<T extends Rankable>(query: string, items: readonly T[], now = Date.now()): Scored<T>[] {
  const wanted = contentWords(query);
  if (wanted.length === 0) return [];
  const scored: Scored<T>[] = [];
  for (const item of items) {
    const have = new Set(contentWords(item.text));
    const shared = wanted.filter((word) => have.has(word)).length;
    if (shared === 0) continue;
    const coverage = shared / wanted.length;
    const ageDays = Math.max(0, (now - item.createdAt.getTime()) / 86_400_000);
    const score = shared + coverage + item.importance * 0.2 + 0.3 / (1 + ageDays / 30);
    scored.push({ item, score, coverage });
  }
  return scored.sort((a, b) => b.score - a.score);
}

/** A question (not a request to act) — the kind a memory can answer without tools. */
export function isDirectQuestion(prompt: string): boolean {
  const text = prompt.trim();
  if (!text || text.length > 300 || text.includes("\n") || text.startsWith("/")) return false;
  const asks =
    text.endsWith("?") ||
    /^(what|who|whom|which|when|where|why|how|do|does|did|is|are|was|were|can|could|should)\b/i.test(text);
  // Anything that asks to look at or change the workspace needs tools.
  const acts =
    /\b(run|fix|edit|change|create|write|delete|remove|install|build|refactor|implement|add|update|open|read|list|show|search|find|grep|test|debug|look)\b/i.test(
      text,
    );
  return asks && !acts;
}
