import { createHash, randomBytes } from "node:crypto";
import * as store from "../store";

/** Recognisable, so the HTTP auth sends it to the one route it may open (server/transport/http/action-token.ts). */
export const ACTION_TOKEN_PREFIX = "wla_";
/** An action token is valid 15 minutes: long enough to reach the phone, short for a token in a payload. */
export const ACTION_TOKEN_TTL_MS = 15 * 60 * 1000;
const TOKEN_BYTES = 32;

export function isActionToken(candidate: string | undefined): candidate is string {
  return candidate !== undefined && candidate.startsWith(ACTION_TOKEN_PREFIX);
}

/** A new token deciding `approvalId` once, as `decidedBy`; only its hash is stored. */
export async function mintActionToken(db: store.Db, approvalId: string, decidedBy: string): Promise<string> {
  const token = ACTION_TOKEN_PREFIX + randomBytes(TOKEN_BYTES).toString("base64url");
  await store.createActionToken(db, {
    tokenHash: hashOf(token),
    approvalId,
    decidedBy,
    expiresAt: new Date(Date.now() + ACTION_TOKEN_TTL_MS),
  });
  return token;
}

/** Uses the token for `approvalId`: who decides, or null (used, expired, another approval's, unknown). */
export function useActionToken(db: store.Db, token: string, approvalId: string): Promise<string | null> {
  return store.useActionToken(db, hashOf(token), approvalId);
}

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
