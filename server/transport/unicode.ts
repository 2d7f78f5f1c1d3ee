import { WorldlineError } from "../errors";

/** Deeper payloads than this are refused here rather than walked (the schemas are far shallower). */
const MAX_DEPTH = 64;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Refuses strings with lone UTF-16 surrogates anywhere in a payload: they cannot be
 * encoded as UTF-8, so SQLite, the query engine's JSON and the model API would fail
 * on them deep inside a handler (a 500) instead of at the edge (a 400).
 */
export function assertWellFormed(value: unknown, depth = 0): void {
  if (typeof value === "string") {
    if (LONE_SURROGATE.test(value))
      throw new WorldlineError("request:invalid", "A string in the request is not valid Unicode (a lone surrogate).");
    return;
  }
  if (typeof value !== "object" || value === null) return;
  if (depth > MAX_DEPTH)
    throw new WorldlineError("request:invalid", `The request is nested deeper than ${MAX_DEPTH} levels.`);
  for (const [key, inner] of Object.entries(value)) {
    assertWellFormed(key, depth + 1);
    assertWellFormed(inner, depth + 1);
  }
}
