import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { parse as parseCookies, serialize as serializeCookie } from "cookie";
import type { PreviewTarget } from "./host-name";

/** How long a ticket from the IDE may take to reach the preview host: one redirect. */
export const TICKET_TTL_MS = 60_000;
/**
 * How long a preview cookie lasts. Short, because it is checked by signature alone (no lookup per
 * request, for the proxy's speed): a revoked share link's previews end by this much later. The
 * panel renews it by going through the IDE on every load.
 */
export const PREVIEW_COOKIE_TTL_S = 2 * 3600;
/** Tickets waiting to be redeemed at once; more are refused (a loop or a flood). */
const MAX_PENDING_TICKETS = 1_000;

const COOKIE_NAME = "worldline_preview";

/**
 * Who may see a preview origin. The IDE hands a signed-in browser a one-time ticket for one
 * session's port; the preview host redeems it for a cookie of its own (HttpOnly, host-only, signed
 * with the bridge's secret, bound to that session and port). The IDE's own cookies never reach a
 * preview host: cookies are per host, and `p3000-x.localhost` is not `127.0.0.1`.
 */
export class PreviewGrants {
  private readonly tickets = new Map<string, PreviewTarget & { expiresAt: number }>();

  constructor(private readonly secret: string) {}

  issueTicket(target: PreviewTarget): string {
    this.dropExpired();
    if (this.tickets.size >= MAX_PENDING_TICKETS) this.tickets.delete(this.tickets.keys().next().value as string);
    const ticket = randomBytes(24).toString("base64url");
    this.tickets.set(ticket, { ...target, expiresAt: Date.now() + TICKET_TTL_MS });
    return ticket;
  }

  /** True once per ticket, for the target it was issued for, within its time. */
  redeem(ticket: string, target: PreviewTarget): boolean {
    const held = this.tickets.get(ticket);
    if (!held) return false;
    this.tickets.delete(ticket);
    return held.expiresAt > Date.now() && held.sessionId === target.sessionId && held.port === target.port;
  }

  /**
   * The Set-Cookie value for a preview host. The Preview panel shows the page in a frame of the IDE,
   * a different site, where a Lax cookie is not sent and a plain third-party cookie is blocked: so
   * SameSite=None and Partitioned (kept per top-level site), which need Secure, which browsers allow
   * on `*.localhost` over http.
   */
  cookie(target: PreviewTarget): string {
    const expires = Math.floor(Date.now() / 1000) + PREVIEW_COOKIE_TTL_S;
    return serializeCookie(COOKIE_NAME, this.value(target, expires), {
      path: "/",
      httpOnly: true,
      secure: true,
      sameSite: "none",
      partitioned: true,
      maxAge: PREVIEW_COOKIE_TTL_S,
    });
  }

  /** The cookie's name and value, for a browser context the bridge drives itself (the browser tool). */
  cookieFor(target: PreviewTarget): { name: string; value: string; expires: number } {
    const expires = Math.floor(Date.now() / 1000) + PREVIEW_COOKIE_TTL_S;
    return { name: COOKIE_NAME, value: this.value(target, expires), expires };
  }

  /** Whether the request carries a valid cookie for this target. */
  allowed(req: IncomingMessage, target: PreviewTarget): boolean {
    const header = req.headers.cookie;
    if (!header) return false;
    const value = parseCookies(header)[COOKIE_NAME];
    const match = value ? /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
    if (!match) return false;
    const expires = Number(match[1]);
    if (expires * 1000 <= Date.now()) return false;
    const expected = Buffer.from(this.value(target, expires));
    const presented = Buffer.from(value as string);
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  }

  /** The request's Cookie header without the preview cookie: the previewed app has no use for it. */
  static withoutGrant(cookieHeader: string | undefined): string | undefined {
    if (!cookieHeader) return undefined;
    const kept = cookieHeader
      .split(";")
      .map((part) => part.trim())
      .filter((part) => part !== "" && !part.startsWith(`${COOKIE_NAME}=`));
    return kept.length > 0 ? kept.join("; ") : undefined;
  }

  private value(target: PreviewTarget, expires: number): string {
    const mac = createHmac("sha256", this.secret)
      .update(`preview:${target.sessionId}:${target.port}:${expires}`)
      .digest("base64url");
    return `${expires}.${mac}`;
  }

  private dropExpired(): void {
    const now = Date.now();
    for (const [ticket, held] of this.tickets) if (held.expiresAt <= now) this.tickets.delete(ticket);
  }
}
