import type { Role, ShareScope } from "../protocol";
import { WorldlineError } from "../errors";
import { httpVerdict, socketVerdict } from "../sharing";

/**
 * What a named person may do, in one place for HTTP and socket.io (the transport asks here
 * before any route or socket handler runs). A person reaches a session at one of three levels:
 * `owner` (its creator, and every admin: everything), or the `drive` / `view` of a share, which
 * mean exactly what they mean for a share link (server/sharing/policy.ts). A viewer never gets
 * more than `view`. Everything outside sessions goes by role; what is not listed is admin-only.
 */
export type Level = "owner" | ShareScope;

const RANK: Record<Level, number> = { view: 1, drive: 2, owner: 3 };
const ROLE_RANK: Record<Role, number> = { viewer: 1, member: 2, admin: 3 };

export function higherLevel(a: Level | null, b: Level | null): Level | null {
  if (!a) return b;
  if (!b) return a;
  return RANK[a] >= RANK[b] ? a : b;
}

/** A person's level on a session from their role and the session's access rows (null: no access). */
export function effectiveLevel(role: Role, granted: Level | null): Level | null {
  if (role === "admin") return "owner";
  if (!granted) return null;
  return role === "viewer" ? "view" : granted;
}

/** Prompting, approving and typing in a terminal: an owner's or a drive share's. */
export function mayDrive(level: Level): boolean {
  return level === "owner" || level === "drive";
}

export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[needed];
}

/**
 * For what only admins (or members) may do, wherever it is asked for (a route's handler, a
 * socket command, runner enrollment). `person` undefined is the launch token or WORLDLINE_TOKENS
 * (the hub's operator), who may do everything.
 */
export function requireRole(person: { role: Role } | undefined, role: Role): void {
  if (person && !roleAtLeast(person.role, role))
    throw new WorldlineError("auth:forbidden", `This needs the ${role} role; you are a ${person.role}.`);
}

/** What an HTTP request needs, before the route runs. */
export type HttpNeed =
  | { kind: "role"; role: Role }
  /** On one session: `owner` passes, `drive`/`view` go through the share-link verdict. */
  | { kind: "session"; sessionId: string }
  | { kind: "approval"; approvalId: string; drive: boolean }
  | { kind: "task"; taskId: string; drive: boolean };

const API = "/api/v1";
const ID = "([^/]+)";

/** Routes every signed-in person (viewers too) may use; lists among them are filtered by the route. */
const ANYONE: [string, RegExp][] = [
  ["GET", /^\/api\/v1\/(csrf|access|me|settings|settings\/layout|openapi\.json|sessions|sessions-search|approvals)$/],
  ["GET", /^\/api\/v1\/me\/(tokens|budget)$/],
  ["POST", /^\/api\/v1\/me\/tokens$/],
  ["DELETE", /^\/api\/v1\/me\/tokens\/[^/]+$/],
  // A person's own devices for Web Push (server/notify): pushes follow what they may see.
  ["GET", /^\/api\/v1\/push\/(key|subscriptions)$/],
  ["POST", /^\/api\/v1\/push\/subscriptions$/],
  ["DELETE", /^\/api\/v1\/push\/subscriptions$/],
];
/** Routes that start or shape work: members and admins. */
const MEMBERS: [string, RegExp][] = [
  ["POST", /^\/api\/v1\/sessions$/],
  ["POST", /^\/api\/v1\/chat\/stream$/],
  ["GET", /^\/api\/v1\/(fs\/directories|workspaces\/recent|skills|memory|memory\/settings|rules|runners)$/],
  // The new-session form's folder picker on a runner: a read-only listing under the runner's roots.
  ["GET", /^\/api\/v1\/runners\/[^/]+\/folders$/],
  ["PUT", /^\/api\/v1\/settings\/layout$/],
  // Routines: a member's own (the routes filter by owner).
  ["GET", /^\/api\/v1\/routines(\/[^/]+(\/runs)?)?$/],
  ["POST", /^\/api\/v1\/routines(\/[^/]+\/fire)?$/],
  ["PATCH", /^\/api\/v1\/routines\/[^/]+$/],
  ["DELETE", /^\/api\/v1\/routines\/[^/]+$/],
];

export function httpNeed(method: string, rawPath: string): HttpNeed {
  const pathname = rawPath.length > 1 ? rawPath.replace(/\/$/, "") : rawPath;
  const read = method === "GET" || method === "HEAD";
  const session = new RegExp(`^${API}/(?:sessions|conversations)/${ID}(?:/.*)?$`).exec(pathname);
  if (session) return { kind: "session", sessionId: decode(session[1]) };
  const approval = new RegExp(`^${API}/approvals/${ID}$`).exec(pathname);
  if (approval) return { kind: "approval", approvalId: decode(approval[1]), drive: !read };
  const task = new RegExp(`^${API}/tasks/${ID}/`).exec(pathname);
  if (task) return { kind: "task", taskId: decode(task[1]), drive: !read };
  const matches = (table: [string, RegExp][]) =>
    table.some(([m, pattern]) => (m === method || (m === "GET" && method === "HEAD")) && pattern.test(pathname));
  if (matches(ANYONE)) return { kind: "role", role: "viewer" };
  if (matches(MEMBERS)) return { kind: "role", role: "member" };
  return { kind: "role", role: "admin" };
}

/** A session-scoped HTTP request at a level below owner: what a share link of that scope may do. */
export function sessionHttpAllowed(level: Level, sessionId: string, method: string, pathname: string): boolean {
  if (level === "owner") return true;
  // /conversations/:id is the session's transcript: a read like the session's own reads.
  const path = pathname.replace(`${API}/conversations/`, `${API}/sessions/`);
  return httpVerdict({ linkId: "", sessionId, scope: level, expiresAt: null }, method, path) === "allow";
}

/** What a socket command needs. */
export type SocketNeed =
  | { kind: "role"; role: Role }
  | { kind: "session"; sessionId: string }
  | { kind: "approval"; approvalId: string }
  | { kind: "free" };

export function socketNeed(event: string, payload: unknown): SocketNeed {
  const record = typeof payload === "object" && payload !== null ? (payload as Record<string, unknown>) : {};
  if (event === "approval.decide" || event === "approval.password")
    return typeof record.approvalId === "string"
      ? { kind: "approval", approvalId: record.approvalId }
      : { kind: "role", role: "admin" };
  // pty.detach and pty.ack name only a terminal this socket already attached to (checked then).
  if ((event === "pty.detach" || event === "pty.ack") && record.sessionId === undefined) return { kind: "free" };
  if (typeof record.sessionId === "string") return { kind: "session", sessionId: record.sessionId };
  // The queue across sessions: each person's holds only what they can see (socket/approvals.ts).
  if (event === "approvals.subscribe" || event === "approvals.unsubscribe") return { kind: "free" };
  // The board's cards: each person's holds only the sessions they can see (socket/board.ts).
  if (event === "board.subscribe" || event === "board.unsubscribe") return { kind: "free" };
  return { kind: "role", role: "admin" };
}

/** A session socket command at a level: owners do anything, others what a share link of that scope may. */
export function sessionSocketAllowed(level: Level, sessionId: string, event: string, payload: unknown): boolean {
  if (level === "owner") return true;
  return socketVerdict({ linkId: "", sessionId, scope: level, expiresAt: null }, event, payload) === "allow";
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // Malformed: the router answers it with a 400 of its own.
  }
}
