import type { IncomingMessage, ServerResponse } from "node:http";
import { WorldlineError } from "../../errors";
import { httpVerdict, pageAllowed, type ShareCapability } from "../../sharing";
import type { BridgeServices } from "../services";
import { readCookie } from "../auth";
import type { Router } from "./router";

const SHARE_PATH = /^\/share\/([A-Za-z0-9_-]{1,200})\/?$/;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Requests served through a share link, so routes can tell (GET /api/v1/access). */
const sharedRequests = new WeakMap<IncomingMessage, ShareCapability>();

export function shareOfRequest(req: IncomingMessage): ShareCapability | undefined {
  return sharedRequests.get(req);
}

/**
 * `GET /share/<token>`: a valid link sets its own HttpOnly cookie (never the launch
 * token's) and lands on the session page; anything else gets a plain refusal.
 * Returns false when the path is not a share path.
 */
export async function openShareLink(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  services: BridgeServices,
): Promise<boolean> {
  const match = req.method === "GET" ? SHARE_PATH.exec(url.pathname) : null;
  if (!match) return false;
  const share = await services.shares.resolve(match[1]);
  if (!share) {
    res.writeHead(403, {
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    });
    res.end("This share link is not valid: it was revoked, it expired, or it was mistyped.\n");
    return true;
  }
  const maxAge = share.expiresAt ? (share.expiresAt.getTime() - Date.now()) / 1000 : 24 * 3600;
  res.writeHead(302, {
    location: `/s/${encodeURIComponent(share.sessionId)}`,
    "set-cookie": services.auth.shareCookie(match[1], maxAge),
    "cache-control": "no-store",
    // The token is in this URL: never leak it to the next page's requests.
    "referrer-policy": "no-referrer",
  });
  res.end();
  return true;
}

/** The share link a request presents (Bearer wls_… for scripts, or the share cookie), if valid now. */
export async function shareOfCredentials(
  req: IncomingMessage,
  services: BridgeServices,
): Promise<{ share: ShareCapability; via: "bearer" | "cookie" } | null> {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ")) {
    const share = await services.shares.resolve(header.slice(7).trim());
    if (share) return { share, via: "bearer" };
  }
  const share = await services.shares.resolve(readCookie(req, services.auth.shareCookieName));
  return share ? { share, via: "cookie" } : null;
}

/** Serves a request authenticated by a share link: only what the link's scope allows on its session. */
export async function serveShared(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  credentials: { share: ShareCapability; via: "bearer" | "cookie" },
  services: BridgeServices,
  router: Router,
  pages: ((req: IncomingMessage, res: ServerResponse) => Promise<void> | void) | null,
): Promise<void> {
  const { share, via } = credentials;
  const method = req.method ?? "GET";
  if (via === "cookie" && !SAFE_METHODS.has(method) && req.headers["x-worldline-csrf"] !== services.auth.csrfToken) {
    throw new WorldlineError("auth:forbidden", "Missing CSRF header.");
  }
  sharedRequests.set(req, share);
  if (url.pathname.startsWith("/api/")) {
    const verdict = httpVerdict(share, method, url.pathname);
    const allowed =
      verdict === "allow" ||
      (verdict === "approval" && (await approvalOfSession(services, url.pathname, share.sessionId)));
    if (!allowed) {
      throw new WorldlineError(
        "auth:forbidden",
        share.scope === "view" ? "This share link can only view its session." : "This share link cannot do that.",
      );
    }
    return router.handle(req, res, url, services);
  }
  if (!pages) throw new WorldlineError("route:not_found", "The web UI is not served by this bridge.");
  if (!pageAllowed(share, url.pathname)) {
    res.writeHead(302, { location: `/s/${encodeURIComponent(share.sessionId)}`, "cache-control": "no-store" });
    res.end();
    return;
  }
  await pages(req, res);
}

async function approvalOfSession(services: BridgeServices, pathname: string, sessionId: string): Promise<boolean> {
  const approvalId = decodeURIComponent(pathname.split("/").filter(Boolean).at(-1) ?? "");
  try {
    return (await services.approvals.get(approvalId)).session_id === sessionId;
  } catch {
    return false; // Unknown approval: refused like anything else outside the session.
  }
}
