import type { IncomingMessage, ServerResponse } from "node:http";
import { WorldlineError, errorMessage } from "../../errors";
import { OIDC_PENDING_SECONDS, SIGN_IN_LIFETIME_MS } from "../../people";
import { LoginBody, type SignInOptions } from "../../protocol";
import type { BridgeServices } from "../services";
import { readCookie } from "../auth";
import { readJson, sendJson } from "./io";

/**
 * `/auth/*` on a hub: the sign-in page's endpoints. Password sign-in answers JSON (the page posts
 * it with fetch); OpenID Connect is two redirects (out to the provider, back to the callback).
 * Returns false when the path is not one of these, or the bridge has no named people.
 */
export async function handleSignIn(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  services: BridgeServices,
): Promise<boolean> {
  if (!url.pathname.startsWith("/auth/") || !(await services.people.enabled())) return false;
  const { auth, people, oidc } = services;
  const route = `${req.method} ${url.pathname}`;
  switch (route) {
    case "GET /auth/options": {
      const options: SignInOptions = { oidc: oidc !== null, password: true };
      sendJson(res, 200, options);
      return true;
    }
    case "POST /auth/login": {
      const body = LoginBody.parse(await readJson(req));
      const { token, person } = await people.signInWithPassword(body.name, body.password);
      res.setHeader("set-cookie", auth.personCookie(token, SIGN_IN_LIFETIME_MS / 1000));
      sendJson(res, 200, { name: person.name, role: person.role });
      return true;
    }
    case "POST /auth/logout": {
      await people.signOut(readCookie(req, auth.personCookieName));
      res.setHeader("set-cookie", auth.personCookie("", 0));
      sendJson(res, 200, { signed_out: true });
      return true;
    }
    case "GET /auth/oidc/start": {
      if (!oidc) throw new WorldlineError("auth:not_found", "OpenID Connect sign-in is not configured on this hub.");
      const { url: target, pending } = await oidc.start(
        callbackUrl(req, services),
        safeNext(url.searchParams.get("next")),
      );
      redirect(res, target, auth.oidcCookie(pending, OIDC_PENDING_SECONDS));
      return true;
    }
    case "GET /auth/oidc/callback": {
      if (!oidc) throw new WorldlineError("auth:not_found", "OpenID Connect sign-in is not configured on this hub.");
      const clearPending = auth.oidcCookie("", 0);
      try {
        // The provider's parameters, read against the redirect URI it was given.
        const current = new URL(callbackUrl(req, services));
        current.search = url.search;
        const { next, identity } = await oidc.finish(current, readCookie(req, auth.oidcCookieName));
        const { token } = await people.signInWithIdentity(identity);
        redirect(res, next, [clearPending, auth.personCookie(token, SIGN_IN_LIFETIME_MS / 1000)]);
      } catch (error) {
        // Back to the page with the reason, never a bare error document mid-redirect.
        redirect(res, `/signin?error=${encodeURIComponent(errorMessage(error).slice(0, 300))}`, clearPending);
      }
      return true;
    }
    default:
      return false;
  }
}

/** Where the provider sends the browser back: WORLDLINE_PUBLIC_URL, else this request's own (allowed) Host. */
function callbackUrl(req: IncomingMessage, services: BridgeServices): string {
  const base = services.config.publicUrl ?? `http://${req.headers.host ?? `127.0.0.1:${services.config.port}`}`;
  return `${base}/auth/oidc/callback`;
}

/** Only a path of this site: never `//other.host` or `/\\other.host` (open redirects). */
function safeNext(next: string | null): string {
  return next && /^\/(?![/\\])/.test(next) ? next : "/";
}

function redirect(res: ServerResponse, location: string, cookies: string | string[]): void {
  res.writeHead(302, {
    location,
    "set-cookie": cookies,
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
  });
  res.end();
}
