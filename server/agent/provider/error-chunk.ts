import type { ErrorBody } from "./chunk";

/** Codes and types that name a passing condition on the provider's side (worth another attempt). */
const TRANSIENT = /server_error|internal|overload|unavailable|rate.?limit|timeout|timed.?out|capacity|busy/i;

/**
 * `{"error": {...}}` delivered inside a 200 stream (OpenRouter, Groq's `event: error`, vLLM): the
 * provider's own message, and whether it is transient (a 429 or 5xx code, or a server-side type).
 */
export function readErrorChunk(error: ErrorBody | string): { message: string; code?: string; transient: boolean } {
  if (typeof error === "string") return { message: error, transient: false };
  const code = error.code ?? undefined;
  const numeric = typeof code === "number" ? code : (error.status_code ?? Number.NaN);
  const transient =
    numeric === 429 || numeric >= 500 || TRANSIENT.test(String(code ?? "")) || TRANSIENT.test(error.type ?? "");
  return {
    message: error.message || JSON.stringify(error),
    ...(code !== undefined ? { code: String(code) } : {}),
    transient,
  };
}
