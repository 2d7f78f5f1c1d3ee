import { createHash, randomBytes } from "node:crypto";

/** How long a `runners add` token may wait to be exchanged: long enough to copy it to another machine today. */
export const ENROLLMENT_TTL_MS = 24 * 60 * 60_000;

/** A one-time enrollment token, printed by `runners add`. */
export function newEnrollmentToken(): string {
  return `wlr_enroll_${randomBytes(32).toString("base64url")}`;
}

/** The long-lived credential a runner gets for its token; the hub keeps only its hash. */
export function newCredential(): string {
  return `wlr_cred_${randomBytes(32).toString("base64url")}`;
}

/**
 * sha256 is enough here: both secrets are 256 random bits, so there is nothing for a slow
 * hash to protect against guessing; the hash keeps a leaked database from holding usable ones.
 */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}
