/**
 * The one error class of the bridge. `code` is `domain:kind` (for example
 * `fs:outside_workspace`, `approval:rejected`); transport maps it to the wire in
 * one place (server/transport/errors.ts).
 */
/** Every kind an error can have: what transport maps to an HTTP status, clients switch on and the retry policy reads. */
const ERROR_KINDS = [
  "bad_request",
  "invalid",
  "invalid_json",
  "invalid_env",
  "invalid_path",
  "outside_workspace",
  "bad_pattern",
  "unsupported_media_type",
  "method_not_allowed",
  "unauthorized",
  "forbidden",
  "not_found",
  "workspace_missing",
  "conflict",
  "busy",
  "already_decided",
  "owner_gone",
  "fenced",
  "at_capacity",
  "full",
  "blocked",
  "path_changed",
  "too_large",
  "cancelled",
  "unavailable",
  "unreachable",
  "timeout",
  "connection",
  "rate_limited",
  "auth",
  "stream",
  "stream_error",
  "malformed_stream",
  "empty",
  "edit_failed",
  "git_failed",
  "git_unavailable",
  "symlink_loop",
  "corrupt",
  "failed",
  // Runners (server/runners, server/runner): enrollment, a runner that is away, and its own boundary.
  "bad_hello",
  "bad_token",
  "bad_credential",
  "bad_response",
  "revoked",
  "root_refused",
  "outside_roots",
  "stale_epoch",
  "unsupported",
  "offline",
  "gone",
  "restarted",
  // Worktrees and shipping (server/worktrees).
  "not_a_repo",
  "bad_ref",
  "taken",
  "dirty",
  "unmerged",
  "base_moved",
  "nothing",
  "missing",
  "refused",
  "internal",
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];
/** `domain:kind` with a kind from ERROR_KINDS, e.g. `fs:outside_workspace`. */
export type ErrorCode = `${string}:${ErrorKind}`;

export class WorldlineError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;

  /**
   * An error another process sent as `{code, message, details?}`: a kind this version does not know
   * becomes `internal`; the details travel on (a 429's `retry_after_s`, a conflict's paths).
   */
  static fromWire(error: { code: string; message: string; details?: unknown }): WorldlineError {
    const [domain, kind] = error.code.split(":");
    const known = (ERROR_KINDS as readonly string[]).includes(kind) ? (kind as ErrorKind) : "internal";
    return new WorldlineError(`${domain}:${known}`, error.message, {
      ...(error.details !== undefined ? { details: error.details } : {}),
    });
  }

  constructor(code: ErrorCode, message: string, options?: { details?: unknown; cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.name = "WorldlineError";
    this.code = code;
    this.details = options?.details;
  }

  get domain(): string {
    return this.code.split(":")[0];
  }

  get kind(): ErrorKind {
    return this.code.split(":")[1] as ErrorKind;
  }
}

export function isWorldlineError(error: unknown): error is WorldlineError {
  return error instanceof WorldlineError;
}

/** A message for any thrown value, without leaking stack traces to users. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
