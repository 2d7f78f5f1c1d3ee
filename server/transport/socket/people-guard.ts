import type { Socket } from "socket.io";
import { WorldlineError } from "../../errors";
import {
  mayDrive,
  roleAtLeast,
  sessionSocketAllowed,
  socketNeed,
  type Level,
  type PersonCredential,
} from "../../people";
import type { BridgeServices } from "../services";
import { readCookie } from "../auth";
import { toWireError } from "../errors";
import { personOfSocket } from "../people";
import { levelsOf } from "./credentials";

/** The level a person's socket last passed the check with, per session (what presence shows others). */
export function personLevelOn(socket: Socket, sessionId: string): Level | undefined {
  return levelsOf(socket).get(sessionId);
}

/** A named person from the handshake: a personal API token in `auth.token` (scripts), or the sign-in cookie. */
export async function personFromHandshake(socket: Socket, services: BridgeServices): Promise<PersonCredential | null> {
  const fromPayload = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
  const byToken = await services.people.personOfApiToken(typeof fromPayload === "string" ? fromPayload : undefined);
  if (byToken) return byToken;
  return services.people.personOfSignIn(readCookie(socket.request, services.auth.personCookieName));
}

/**
 * Every packet of a named person's socket passes here before any handler (as share-link sockets
 * pass guardShareSocket): a command on a session they cannot see, or above their level there
 * (a viewer's prompt, approval or terminal keystroke), is answered `auth:forbidden` and never
 * reaches a handler. Role and access are re-read (server/people caches them for a moment), so
 * a disabled person or a revoked share stops working on open sockets too.
 */
export function guardPersonSocket(socket: Socket, services: BridgeServices): void {
  const person = personOfSocket(socket);
  if (!person) return;
  socket.use((packet, next) => {
    const [event, payload] = packet as [string, unknown, ...unknown[]];
    const ack = packet.findLast((part: unknown) => typeof part === "function") as
      ((response: unknown) => void) | undefined;
    const refuse = (message: string) =>
      ack?.({ ok: false, error: toWireError(new WorldlineError("auth:forbidden", message)).error });
    void allowed(services, socket, person.id, event, payload)
      .then((verdict) => (verdict === true ? next() : refuse(verdict)))
      // Fails closed: a check that throws refuses the command.
      .catch(() => refuse("Access check failed."));
  });
}

async function allowed(
  services: BridgeServices,
  socket: Socket,
  personId: string,
  event: string,
  payload: unknown,
): Promise<true | string> {
  const person = await services.people.current(personId);
  if (!person) return "Your account is disabled.";
  const need = socketNeed(event, payload);
  switch (need.kind) {
    case "free":
      return true;
    case "role":
      return roleAtLeast(person.role, need.role) ? true : `This needs the ${need.role} role.`;
    case "session": {
      const level = await services.people.levelOn(personId, need.sessionId);
      if (!level) return "No session with that id.";
      levelsOf(socket).set(need.sessionId, level);
      return sessionSocketAllowed(level, need.sessionId, event, payload) ? true : "You can only view this session.";
    }
    case "approval": {
      const sessionId = await services.people.sessionOfApproval(need.approvalId);
      const level = sessionId ? await services.people.levelOn(personId, sessionId) : null;
      if (!level) return "No approval with that id.";
      return mayDrive(level) ? true : "You can only view this session.";
    }
  }
}
