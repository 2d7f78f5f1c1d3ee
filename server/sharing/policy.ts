import type { ShareCapability } from "./service";

/**
 * What a share link may do, in one place for HTTP and socket.io. The owner (launch
 * token) may do everything; these rules apply only to requests authenticated by a
 * share link. Anything not listed is refused.
 */

/** An HTTP request a link may make; "approval" means: only if the approval is of the link's session. */
export type HttpVerdict = "allow" | "deny" | "approval";

const API = "/api/v1";
/** Session routes a drive link may change: act on the session, never its settings (yolo), deletion or links. */
const DRIVE_SESSION_ACTIONS = new Set(["cancel", "rewind", "rewind/undo", "undo", "files/content", "preview/capture"]);
/** Read-only routes outside the session a shared page needs. */
const SHARED_READS = new Set([`${API}/csrf`, `${API}/health`, `${API}/access`, `${API}/settings/layout`]);

export function httpVerdict(capability: ShareCapability, method: string, pathname: string): HttpVerdict {
  const read = method === "GET" || method === "HEAD";
  if (read && SHARED_READS.has(pathname)) return "allow";
  const own = `${API}/sessions/${encodeURIComponent(capability.sessionId)}`;
  if (pathname === own || pathname === `${own}/`) return read ? "allow" : "deny";
  if (pathname.startsWith(`${own}/`)) {
    const rest = pathname.slice(own.length + 1).replace(/\/$/, "");
    if (rest.startsWith("share-links")) return "deny";
    // Who else the session is shared with (people's names) is for those who drive it, not for a view.
    if (rest === "access" && capability.scope === "view") return "deny";
    if (read) return "allow";
    return capability.scope === "drive" && DRIVE_SESSION_ACTIONS.has(rest) ? "allow" : "deny";
  }
  if (capability.scope === "drive" && method === "POST" && /^\/api\/v1\/approvals\/[^/]+\/?$/.test(pathname))
    return "approval";
  return "deny";
}

/** Pages a link may load: its session's page and the app's static assets. */
export function pageAllowed(capability: ShareCapability, pathname: string): boolean {
  if (pathname.startsWith("/_next/") || pathname === "/favicon.ico") return true;
  return pathname === `/s/${encodeURIComponent(capability.sessionId)}`;
}

/** Socket commands by what they need: reading the session, or driving it. */
const SOCKET_READS = new Set([
  "session.subscribe",
  "session.unsubscribe",
  "pty.list",
  "pty.attach",
  "pty.detach",
  "pty.ack",
  "files.watch",
  "files.unwatch",
  "presence.focus",
  "ports.watch",
  "ports.unwatch",
]);
const SOCKET_DRIVES = new Set([
  "turn.prompt",
  "turn.steer",
  "turn.cancel",
  "session.compact",
  "presence.typing",
  "pty.create",
  "pty.rename",
  "pty.close",
  "pty.run",
  "pty.input",
  "pty.resize",
]);
/** Commands on an approval id: allowed to drive links when the approval is of their session. */
const SOCKET_APPROVALS = new Set(["approval.decide", "approval.password"]);

export type SocketVerdict = "allow" | "deny" | "approval";

export function socketVerdict(capability: ShareCapability, event: string, payload: unknown): SocketVerdict {
  const sessionId =
    typeof payload === "object" && payload !== null ? (payload as { sessionId?: unknown }).sessionId : undefined;
  // pty.detach and pty.ack name only a terminal this socket already attached to (checked then).
  const ownSession =
    sessionId === capability.sessionId || ((event === "pty.detach" || event === "pty.ack") && sessionId === undefined);
  if (SOCKET_READS.has(event)) return ownSession ? "allow" : "deny";
  if (SOCKET_DRIVES.has(event)) return ownSession && capability.scope === "drive" ? "allow" : "deny";
  if (SOCKET_APPROVALS.has(event)) return capability.scope === "drive" ? "approval" : "deny";
  return "deny";
}
