import { ProviderError } from "../provider";

/** Statuses worth retrying: request timeout, conflict, rate limit, server errors. */
const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** How much of an error body that is not JSON (or JSON without a message) an error quotes. */
export const QUOTE_CHARS = 300;

/** An HTTP error status; `providerMessage` is the provider's own words, for the quirk checks. */
export class StatusError extends ProviderError {
  constructor(
    readonly providerMessage: string,
    status: number,
    retryable: boolean,
    retryAfterMs: number | undefined,
    kind: "rate_limited" | "auth" | "unavailable" | "failed",
  ) {
    super(`HTTP ${status}: ${providerMessage}`, status, retryable, retryAfterMs, { kind });
  }
}

/**
 * A provider's error status: its own message (from any of the usual JSON bodies, or the text),
 * retryable or not, with its Retry-After. `body` is the parsed JSON body when it was JSON, `text`
 * the body otherwise (what the SDK hands its status errors).
 */
export function statusError(status: number, body: unknown, text: string | undefined, headers: Headers): StatusError {
  const retryable = RETRYABLE_STATUS.has(status) || status >= 500;
  const kind =
    status === 429 ? "rate_limited" : status === 401 || status === 403 ? "auth" : retryable ? "unavailable" : "failed";
  const message = errorMessageOf(body, text ?? "") || `status ${status} with no body`;
  return new StatusError(message, status, retryable, retryAfter(headers.get("retry-after")), kind);
}

/** `{"error": {"message"}}` (OpenAI and most), `{"error": "…"}`, `{"message"}`, `{"detail"}` (FastAPI servers), or the text. */
function errorMessageOf(body: unknown, text: string): string {
  if (body === undefined || body === null) return text.trim().slice(0, QUOTE_CHARS);
  const record = (typeof body === "object" ? body : {}) as { error?: unknown; message?: unknown; detail?: unknown };
  const error = record.error as { message?: unknown } | string | undefined;
  const candidates = [typeof error === "object" ? error?.message : error, record.message, record.detail];
  const found = candidates.find((value) => typeof value === "string" && value.length > 0) as string | undefined;
  return found ?? JSON.stringify(body).slice(0, QUOTE_CHARS);
}

function retryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
