import { createHash, randomBytes } from "node:crypto";
import type { CreatedShareLink, ShareLinkView, ShareScope } from "../protocol";
import { WorldlineError } from "../errors";
import * as store from "../store";

/** What a valid share link grants: one session, one scope, until it expires or is revoked. */
export interface ShareCapability {
  linkId: string;
  sessionId: string;
  scope: ShareScope;
  expiresAt: Date | null;
}

/** 32 random bytes: unguessable, and short enough for a QR code or a chat message. */
const TOKEN_BYTES = 32;
/** Tokens are recognisable (in logs, in a leaked paste) and cannot be mistaken for the launch token. */
const TOKEN_PREFIX = "wls_";

/**
 * Share links: capability tokens for one session. Only a SHA-256 of each token is
 * stored, so the database alone cannot be used to act on a session. Every use is
 * checked against the database, so a revocation or an expiry applies at once.
 */
export class ShareLinks {
  private readonly revokedListeners = new Set<(linkId: string) => void>();

  constructor(private readonly db: store.Db) {}

  async create(sessionId: string, input: { scope: ShareScope; expiresInSeconds: number }): Promise<CreatedShareLink> {
    const token = TOKEN_PREFIX + randomBytes(TOKEN_BYTES).toString("base64url");
    const expiresAt = new Date(Date.now() + input.expiresInSeconds * 1000);
    const row = await store.createShareLink(this.db, {
      sessionId,
      tokenHash: hashToken(token),
      scope: input.scope,
      expiresAt,
    });
    return { ...toView(row), token, path: `/share/${token}` };
  }

  async list(sessionId: string): Promise<ShareLinkView[]> {
    return (await store.listShareLinks(this.db, sessionId)).map(toView);
  }

  async revoke(sessionId: string, linkId: string): Promise<ShareLinkView> {
    const row = await store.revokeShareLink(this.db, sessionId, linkId);
    if (!row) throw new WorldlineError("share:not_found", `No share link "${linkId}" on this session.`);
    for (const listener of this.revokedListeners) listener(row.id);
    return toView(row);
  }

  /** The capability a token grants now, or null (unknown, revoked, expired, malformed). */
  async resolve(token: unknown): Promise<ShareCapability | null> {
    if (typeof token !== "string" || !token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
    const row = await store.findShareLinkByHash(this.db, hashToken(token));
    if (!row || !isActive(row)) return null;
    return {
      linkId: row.id,
      sessionId: row.sessionId,
      scope: row.scope === "drive" ? "drive" : "view",
      expiresAt: row.expiresAt,
    };
  }

  /** Called with a link's id when it is revoked (open sockets using it are closed). */
  onRevoked(listener: (linkId: string) => void): () => void {
    this.revokedListeners.add(listener);
    return () => this.revokedListeners.delete(listener);
  }
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function isActive(row: { revokedAt: Date | null; expiresAt: Date | null }): boolean {
  return !row.revokedAt && (!row.expiresAt || row.expiresAt.getTime() > Date.now());
}

function toView(row: store.ShareLinkRow): ShareLinkView {
  return {
    id: row.id,
    session_id: row.sessionId,
    scope: row.scope === "drive" ? "drive" : "view",
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    active: isActive(row),
  };
}
