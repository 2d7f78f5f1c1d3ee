import type { IncomingMessage, ServerResponse } from "node:http";
import { WorldlineError } from "../../errors";
import type { BridgeServices } from "../services";
import { sendError, sendJson } from "./io";
import { Router } from "./router";
import { approvalRoutes } from "./routes/approvals";
import { checkpointRoutes } from "./routes/checkpoints";
import { reviewRoutes } from "./routes/review";
import { chatRoutes } from "./routes/chat";
import { healthRoutes } from "./routes/health";
import { sessionRoutes } from "./routes/sessions";
import { worktreeRoutes } from "./routes/worktrees";
import { taskRoutes } from "./routes/tasks";
import { fileRoutes } from "./routes/files";
import { sessionListRoutes, settingsRoutes } from "./routes/settings";
import { diagnosticRoutes } from "./routes/diagnostics";
import { hookRoutes } from "./routes/hooks";
import { mcpRoutes } from "./routes/mcp";
import { shareRoutes } from "./routes/share";
import { openShareLink, serveShared, shareOfCredentials } from "./share-access";
import { auditRoutes } from "./routes/audit";
import { conversationRoutes } from "./routes/conversations";
import { memoryRoutes } from "./routes/memory";
import { openApiRoutes } from "./routes/openapi";
import { skillRoutes } from "./routes/skills";
import { peopleRoutes } from "./routes/people";
import { authorizePerson } from "./people-access";
import { handleSignIn } from "./sign-in";
import { rememberPerson, signedInOf } from "../people";
import { runnerRoutes } from "./routes/runners";
import { fireWithRoutineToken, routineRoutes } from "./routes/routines";
import { pushRoutes } from "./routes/push";
import { decideWithActionToken } from "./action-token";
import { previewRoutes } from "./routes/preview";

export function createApiRouter(): Router {
  const router = new Router().add(
    ...healthRoutes,
    ...sessionRoutes,
    ...worktreeRoutes,
    ...chatRoutes,
    ...fileRoutes,
    ...settingsRoutes,
    ...sessionListRoutes,
    ...approvalRoutes,
    ...taskRoutes,
    ...checkpointRoutes,
    ...reviewRoutes,
    ...mcpRoutes,
    ...hookRoutes,
    ...diagnosticRoutes,
    ...shareRoutes,
  );
  router.add(...memoryRoutes, ...skillRoutes, ...conversationRoutes, ...auditRoutes, ...peopleRoutes, ...runnerRoutes);
  router.add(...routineRoutes);
  router.add(...pushRoutes);
  router.add(...previewRoutes);
  return router.add(...openApiRoutes(router));
}

type PageHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Every HTTP request passes here: Host, Origin and token checks, the token-in-URL
 * login, then the API router or the Next.js pages.
 */
export function createRequestHandler(services: BridgeServices, pages: PageHandler | null) {
  const router = createApiRouter();
  const { auth } = services;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    try {
      const url = requestUrl(req.url);
      if (!auth.hostAllowed(req)) {
        throw new WorldlineError(
          "auth:forbidden",
          "This Host is not allowed; open Worldline through the URL it printed.",
        );
      }
      const stateChanging = !SAFE_METHODS.has(req.method ?? "GET");
      if (stateChanging && !auth.originAllowed(req)) {
        throw new WorldlineError("auth:forbidden", "Cross-origin requests are not allowed.");
      }
      // Forms and beacons can only send form/multipart/text bodies: a state change carries JSON or nothing.
      if (stateChanging && hasBody(req) && !isJson(req)) {
        throw new WorldlineError(
          "request:unsupported_media_type",
          "Send the body as JSON with Content-Type: application/json.",
        );
      }
      if (req.method === "GET" && url.pathname === "/api/v1/health")
        return await router.handle(req, res, url, services);

      // A notification's action token opens one route for one approval, and nothing else.
      if (await decideWithActionToken(req, res, url, services)) return;
      const loginToken = url.searchParams.get("token");
      if (req.method === "GET" && loginToken !== null && !url.pathname.startsWith("/api/")) {
        return login(res, url, auth.tokenMatches(loginToken), auth.sessionCookie(loginToken));
      }
      const fired = await fireWithRoutineToken(req, url.pathname, services);
      if (fired) return sendJson(res, fired.status, fired.body);
      if (await openShareLink(req, res, url, services)) return;
      if (await handleSignIn(req, res, url, services)) return;
      let method = auth.authenticated(req);
      if (!method) {
        // A named person on a hub: one check of what they may do, then the same routes and pages.
        const signedIn = await signedInOf(req, services);
        if (signedIn) {
          rememberPerson(req, signedIn);
          if (url.pathname.startsWith("/api/")) await authorizePerson(req, url.pathname, signedIn.person, services);
          method = signedIn.via;
        }
      }
      if (!method) {
        // A share link grants one session, one scope: see server/sharing/policy.ts.
        const shared = await shareOfCredentials(req, services);
        if (shared) return await serveShared(req, res, url, shared, services, router, pages);
        if (url.pathname.startsWith("/api/")) throw new WorldlineError("auth:unauthorized", "Missing or wrong token.");
        if (await services.people.enabled()) return signInPage(req, res, url, pages);
        return sendLoginHint(res);
      }
      // A cookie rides along with any request the browser makes, so state changes
      // authenticated by it must also prove they come from our own page's script.
      if (method === "cookie" && stateChanging && req.headers["x-worldline-csrf"] !== auth.csrfToken) {
        throw new WorldlineError(
          "auth:forbidden",
          // Worded so that redaction (server/secrets) finds no token in it: "Bearer" followed by a long word reads as one.
          "Missing CSRF header (x-worldline-csrf). A script can send its token in an Authorization: Bearer header.",
        );
      }
      if (url.pathname.startsWith("/api/")) return await router.handle(req, res, url, services);
      if (!pages) throw new WorldlineError("route:not_found", "The web UI is not served by this bridge.");
      await pages(req, res);
    } catch (error) {
      sendError(res, error);
    }
  };
}

const URL_BASE = "http://bridge.invalid";

/**
 * The request target as a URL on this server. Anything but a path of our own (`//host/x`, `/\\x`,
 * `http://host/`, `*`) is a 400: WHATWG URL reads those as other hosts or refuses them.
 */
function requestUrl(target = "/"): URL {
  try {
    const url = new URL(target, URL_BASE);
    if (target.startsWith("/") && url.origin === URL_BASE) return url;
  } catch {
    // Not a URL at all: refused below.
  }
  throw new WorldlineError("request:invalid", `The request target is not a path: ${target.slice(0, 100)}`);
}

/** On every response: no token-bearing URL leaks through Referer, no MIME sniffing, no framing (clickjacked approvals). */
const SECURITY_HEADERS = {
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

function hasBody(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

function isJson(req: IncomingMessage): boolean {
  return (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase() === "application/json";
}

function login(res: ServerResponse, url: URL, valid: boolean, cookie: string): void {
  if (!valid) {
    res.writeHead(401, { "content-type": "text/plain; charset=utf-8" });
    res.end("Wrong token. Open the URL printed by `npm start` (Worldline ready: …).\n");
    return;
  }
  url.searchParams.delete("token");
  // Strip the token from the address bar and history right away.
  res.writeHead(302, {
    location: url.pathname + url.search,
    "set-cookie": cookie,
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
  });
  res.end();
}

/** The sign-in page, its scripts and styles, and the app's public files (icons, manifest, service worker). */
const SIGN_IN_PAGE_PATHS = /^\/(signin|favicon\.ico|manifest\.webmanifest|sw\.js|offline\.html|_next\/.*|icons\/.*)$/;

/** A hub without a sign-in: the sign-in page (and its assets), and every other page sends there. */
async function signInPage(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  pages: PageHandler | null,
): Promise<void> {
  if (pages && SIGN_IN_PAGE_PATHS.test(url.pathname)) return void (await pages(req, res));
  const next = url.pathname === "/" ? "" : `?next=${encodeURIComponent(url.pathname + url.search)}`;
  res.writeHead(302, { location: `/signin${next}`, "cache-control": "no-store" });
  res.end();
}

function sendLoginHint(res: ServerResponse): void {
  res.writeHead(401, { "content-type": "text/html; charset=utf-8" });
  res.end(
    `<!doctype html><meta charset="utf-8"><title>Worldline</title><body style="font:14px system-ui;background:#0b0d10;color:#c9d1d9;padding:3rem">` +
      `<h1 style="font-size:18px">Worldline needs its token</h1><p>Open the URL printed in the terminal where you ran <code>npm start</code>:` +
      ` <code>Worldline ready: http://127.0.0.1:&lt;port&gt;/?token=…</code></p></body>`,
  );
}
