import { ZodError } from "zod";
import type { WireError } from "../protocol";
import { isWorldlineError, type ErrorKind } from "../errors";
import { faultError, storeFault, storeHealth } from "../store";
import { redactForOutput } from "../secrets";

const STATUS_BY_KIND: Partial<Record<ErrorKind, number>> = {
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
  owner_gone: 409,
  fenced: 409,
  blocked: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
  unreachable: 503,
  full: 503,
  at_capacity: 429,
  // Runners (server/runners): one that is away, and a path its own boundary refused.
  unsupported: 400,
  outside_roots: 403,
  offline: 503,
  gone: 503,
  restarted: 503,
  // Worktrees and shipping (server/worktrees): bad input, a state in the way, a remote that said no.
  not_a_repo: 400,
  bad_ref: 400,
  taken: 409,
  dirty: 409,
  unmerged: 409,
  base_moved: 409,
  nothing: 409,
  missing: 409,
  refused: 502,
};

/**
 * The one place errors become wire errors: `{code, message}` plus an HTTP status, and for a 429
 * the seconds to wait (`Retry-After`). A database that is unreachable, locked or out of disk is a
 * 503 with a specific code (README, "When the database, Redis or the disk goes away"), logged once per change of the store's state.
 */
export function toWireError(error: unknown): { status: number; error: WireError; retryAfter?: number } {
  const fault = isWorldlineError(error) || error instanceof ZodError ? null : storeFault(error);
  if (fault) {
    storeHealth.failed(fault, error);
    return toWireError(faultError(fault, error));
  }
  if (error instanceof ZodError) {
    const message = error.issues
      .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
      .join("; ");
    return { status: 400, error: { code: "request:invalid", message } };
  }
  if (isWorldlineError(error)) {
    const status = STATUS_BY_KIND[error.kind] ?? 500;
    const retryAfter = (error.details as { retry_after_s?: unknown } | undefined)?.retry_after_s;
    return {
      status,
      ...(typeof retryAfter === "number" ? { retryAfter } : {}),
      error: {
        code: error.code,
        message: redactForOutput(error.message),
        ...(error.details ? { details: error.details } : {}),
        // A conflict names its paths on the error itself too (`{error:{code, message, paths}}`).
        ...conflictPaths(error.details),
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

function conflictPaths(details: unknown): { paths?: string[] } {
  const paths = (details as { paths?: unknown } | undefined)?.paths;
  return Array.isArray(paths) && paths.every((p) => typeof p === "string") ? { paths } : {};
}
