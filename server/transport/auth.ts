import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { networkInterfaces, type NetworkInterfaceInfo } from "node:os";
import { parse as parseCookies, serialize as serializeCookie } from "cookie";
import { isLoopbackHost } from "../config";

/**
 * Who may talk to the bridge: a request must name an allowed Host (DNS-rebinding
 * defence), carry an allowed Origin when it has one and changes state or upgrades
 * (cross-site defence), and present the launch token (Bearer header or the
 * HttpOnly cookie set by visiting the printed URL).
 */
export interface AuthPolicy {
  readonly token: string;
  readonly cookieName: string;
  readonly csrfToken: string;
  hostAllowed(req: IncomingMessage): boolean;
  /** The IDE's origins (`http://` + each allowed host): the pages that may frame a preview (server/preview). */
  readonly origins: readonly string[];
  originAllowed(req: IncomingMessage): boolean;
  /** The token presented by the request, if it is the right one. */
  authenticated(req: IncomingMessage): "bearer" | "cookie" | null;
  tokenMatches(candidate: unknown): boolean;
  /** The name of the token presented (WORLDLINE_TOKENS; the launch token is `default`), or null. */
  tokenName(candidate: unknown): string | null;
  /** Who a decision is recorded as: the token's name with named tokens, else the channel ("web", "http"). */
  decider(tokenName: string | null | undefined, channel: string): string;
  /** The name of the token a request carries (header or cookie). */
  requestTokenName(req: IncomingMessage): string | null;
  sessionCookie(token?: string): string;
  /** The cookie holding a share-link token (separate from the launch token's). */
  readonly shareCookieName: string;
  /** Set by visiting /share/<token>; SameSite=Lax so a link opened from a chat app still lands logged in. */
  shareCookie(token: string, maxAgeSeconds: number): string;
  /** A named person's sign-in cookie on a hub (server/people). */
  readonly personCookieName: string;
  /**
   * HttpOnly, SameSite=Lax: the browser comes back from the identity provider through a cross-site
   * redirect, after which a Strict cookie would not be sent. State changes still need the CSRF header.
   */
  personCookie(value: string, maxAgeSeconds: number): string;
  /** The OpenID Connect round trip's signed state, on /auth/oidc only. */
  readonly oidcCookieName: string;
  oidcCookie(value: string, maxAgeSeconds: number): string;
  /** Signs what the bridge hands out and must get back unchanged (the OIDC state); shared by a team's bridges. */
  readonly secret: string;
}

export function createToken(): string {
  return randomBytes(24).toString("base64url");
}

export function createAuthPolicy(options: {
  token: string;
  host: string;
  port: number;
  extraHosts?: string[];
  /** Named tokens (WORLDLINE_TOKENS), accepted besides `token`. */
  named?: { name: string; token: string }[];
  /**
   * Team mode: the bridges behind one URL share the cookies' names (otherwise named after the
   * port), so a tab logged in through one bridge is logged in on all of them.
   */
  team?: boolean;
  /** The public URL is https (behind a TLS proxy): every cookie is `Secure`, never sent over plain HTTP. */
  secure?: boolean;
}): AuthPolicy {
  const { token, port } = options;
  const secure = options.secure ?? false;
  const named = options.named ?? [];
  const names = new Set(["127.0.0.1", "localhost", "[::1]"]);
  if (!isLoopbackHost(options.host)) names.add(options.host.includes(":") ? `[${options.host}]` : options.host);
  // `name:port` (a load balancer's address) is allowed as given; a bare name on this bridge's port.
  const withPort = (options.extraHosts ?? []).filter((extra) => /:\d+$/.test(extra)).map((h) => h.toLowerCase());
  for (const extra of options.extraHosts ?? []) if (!/:\d+$/.test(extra)) names.add(extra.toLowerCase());
  // Bound to every interface (only possible with WORLDLINE_ALLOW_LAN=1): the machine's own addresses are its names.
  if (options.host === "0.0.0.0" || options.host === "::")
    for (const address of interfaceAddresses()) names.add(address);
  const hosts = new Set([...names].map((name) => `${name}:${port}`).concat(withPort));
  const origins = new Set([...hosts].map((host) => `http://${host}`));
  // Cookies are shared by every port of a host, so the name carries the port.
  const cookieScope = options.team ? "team" : String(port);
  const cookieName = `worldline_token_${cookieScope}`;
  const digests = [{ name: "default", digest: digest(token) }].concat(
    named.map((entry) => ({ name: entry.name, digest: digest(entry.token) })),
  );
  const csrfToken = createHmac("sha256", token).update("worldline-csrf").digest("base64url");
  const cookie = (name: string, value: string, maxAgeSeconds: number, path = "/") =>
    serializeCookie(name, value, {
      path,
      httpOnly: true,
      sameSite: "lax",
      secure,
      maxAge: Math.max(0, Math.floor(maxAgeSeconds)),
    });

  const tokenName = (candidate: unknown): string | null => {
    if (typeof candidate !== "string" || candidate.length === 0) return null;
    const presented = digest(candidate);
    // Every entry is compared (no early exit), so the time taken says nothing about which matched.
    let found: string | null = null;
    for (const entry of digests) if (timingSafeEqual(presented, entry.digest) && found === null) found = entry.name;
    return found;
  };
  const tokenMatches = (candidate: unknown): boolean => tokenName(candidate) !== null;

  return {
    token,
    cookieName,
    csrfToken,
    hostAllowed: (req) => hosts.has((req.headers.host ?? "").toLowerCase()),
    origins: [...origins],
    originAllowed: (req) => {
      const origin = req.headers.origin;
      // Exact comparison only: never "null", never suffix or prefix matching.
      return origin === undefined || origins.has(origin.toLowerCase());
    },
    authenticated: (req) => {
      if (tokenMatches(bearerOf(req))) return "bearer";
      if (tokenMatches(readCookie(req, cookieName))) return "cookie";
      return null;
    },
    tokenMatches,
    tokenName,
    decider: (name, channel) => (named.length > 0 && name ? name : channel),
    requestTokenName: (req) => tokenName(bearerOf(req)) ?? tokenName(readCookie(req, cookieName)),
    sessionCookie: (value = token) =>
      serializeCookie(cookieName, value, { path: "/", httpOnly: true, sameSite: "strict", secure }),
    shareCookieName: `worldline_share_${cookieScope}`,
    shareCookie: (value, maxAgeSeconds) => cookie(`worldline_share_${cookieScope}`, value, maxAgeSeconds),
    personCookieName: `worldline_person_${cookieScope}`,
    personCookie: (value, maxAgeSeconds) => cookie(`worldline_person_${cookieScope}`, value, maxAgeSeconds),
    oidcCookieName: `worldline_oidc_${cookieScope}`,
    oidcCookie: (value, maxAgeSeconds) => cookie(`worldline_oidc_${cookieScope}`, value, maxAgeSeconds, "/auth/oidc"),
    secret: createHmac("sha256", token).update("worldline-secret").digest("base64url"),
  };
}

/** The token of an `Authorization: Bearer` header. */
export function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith("Bearer ") ? header.slice(7).trim() : undefined;
}

/**
 * One cookie of the request. A malformed value (`%E0%A4%A`) comes back as written, never as a
 * thrown URIError: the `cookie` package decodes leniently, so such a token just does not match.
 */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  return parseCookies(header)[name];
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((entry): entry is NetworkInterfaceInfo => entry !== undefined && !entry.internal)
    .map((entry) => (entry.family === "IPv6" ? `[${entry.address.toLowerCase()}]` : entry.address));
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}
