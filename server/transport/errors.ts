import { ZodError } from "zod";
import type { WireError } from "../protocol";
import { isWorldlineError } from "../errors";
import { redactForOutput } from "../secrets";

const STATUS_BY_KIND: Record<string, number> = {
  invalid: 400,
  bad_request: 400,
  invalid_json: 400,
  unsupported_media_type: 415,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  busy: 409,
  already_decided: 409,
  blocked: 409,
  too_large: 413,
  unavailable: 503,
  // Runners (server/runners): one that is away, and a path its own boundary refused.
  unsupported: 400,
  outside_roots: 403,
  offline: 503,
  gone: 503,
  restarted: 503,
};

/** The one place errors become wire errors: `{code, message}` plus an HTTP status. */
export function toWireError(error: unknown): { status: number; error: WireError } {
  if (error instanceof ZodError) {
    const message = error.issues
      .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
      .join("; ");
    return { status: 400, error: { code: "request:invalid", message } };
  }
  if (isWorldlineError(error)) {
    const status = STATUS_BY_KIND[error.kind] ?? 500;
    return {
      status,
      error: {
        code: error.code,
        message: redactForOutput(error.message),
        ...(error.details ? { details: error.details } : {}),
      },
    };
  }
  // Unknown errors are bugs: log the detail on the bridge (redacted: a message may quote a key), send nothing internal.
  console.error(
    "[worldline] unexpected error:",
    redactForOutput(error instanceof Error ? (error.stack ?? error.message) : String(error)),
  );
  return { status: 500, error: { code: "bridge:internal", message: "Internal error; see the bridge log." } };
}
