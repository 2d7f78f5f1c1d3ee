/**
 * The one error class of the bridge. `code` is `domain:kind` (for example
 * `fs:outside_workspace`, `approval:rejected`); transport maps it to the wire in
 * one place (server/transport/errors.ts).
 */
export type ErrorKind =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "too_large"
  | "unavailable"
  | "internal"
  | (string & {});

export class WorldlineError extends Error {
  readonly code: string;
  readonly details?: unknown;

  constructor(code: `${string}:${string}`, message: string, options?: { details?: unknown; cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.name = "WorldlineError";
    this.code = code;
    this.details = options?.details;
  }

  get domain(): string {
    return this.code.split(":")[0];
  }

  get kind(): ErrorKind {
    return this.code.split(":")[1];
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
