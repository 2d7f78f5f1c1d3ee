import type { IncomingMessage, ServerResponse } from "node:http";
import { WorldlineError, errorMessage, isWorldlineError } from "../../errors";
import { OIDC_PENDING_SECONDS, SIGN_IN_LIFETIME_MS } from "../../people";
import { LoginBody, sameOriginPath, SIGN_IN_ERRORS, type SignInErrorCode, type SignInOptions } from "../../protocol";
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
        sameOriginPath(url.searchParams.get("next"), hubOrigin(req, services)),
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
        // Checked again here: the pending cookie is signed, but the rule is the rule wherever `next` comes from.
        const target = sameOriginPath(next, hubOrigin(req, services));
        redirect(res, target, [clearPending, auth.personCookie(token, SIGN_IN_LIFETIME_MS / 1000)]);
      } catch (error) {
        // Back to the page with a known code (its text is fixed there), never a bare error document mid-redirect.
        console.error(`[worldline] OpenID Connect sign-in failed: ${errorMessage(error)}`);
        redirect(res, `/signin?error=${signInErrorOf(error)}`, clearPending);
      }
      return true;
    }
    default:
      return false;
  }
}

/** The hub's origin: WORLDLINE_PUBLIC_URL, else this request's own (allowed) Host. */
function hubOrigin(req: IncomingMessage, services: BridgeServices): string {
  return new URL(services.config.publicUrl ?? `http://${req.headers.host ?? `127.0.0.1:${services.config.port}`}`)
    .origin;
}

/** Where the provider sends the browser back. */
function callbackUrl(req: IncomingMessage, services: BridgeServices): string {
  return `${services.config.publicUrl ?? hubOrigin(req, services)}/auth/oidc/callback`;
}

/** The code `/signin?error=` shows for a failed callback (server/protocol/people.ts maps it to its text). */
function signInErrorOf(error: unknown): SignInErrorCode {
  if (!isWorldlineError(error)) return "failed";
  const named = (error.details as { sign_in?: unknown } | undefined)?.sign_in;
  if (typeof named === "string" && Object.hasOwn(SIGN_IN_ERRORS, named)) return named as SignInErrorCode;
  if (error.kind === "forbidden") return "disabled";
  if (error.kind === "unavailable") return "unavailable";
  return "failed";
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
