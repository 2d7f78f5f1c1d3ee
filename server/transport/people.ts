import type { IncomingMessage } from "node:http";
import type { Socket } from "socket.io";
import { WorldlineError } from "../errors";
import type { Person } from "../people";
import type { BridgeServices } from "./services";
import { bearerOf, readCookie } from "./auth";

/**
 * Named people as the transport sees them: who a request or socket is, what `decided_by` records,
 * and which sessions a list shows. What they may do is decided in server/people/policy.ts and
 * enforced before any handler (http/people-access.ts, socket/people-guard.ts).
 */
export interface SignedIn {
  person: Person;
  /** A personal API token (Bearer) or the sign-in cookie (state changes then need the CSRF header). */
  via: "bearer" | "cookie";
}

const requests = new WeakMap<IncomingMessage, SignedIn>();

/** The person a request was authenticated as (absent for the launch token, WORLDLINE_TOKENS and share links). */
export function personOfRequest(req: IncomingMessage): Person | undefined {
  return requests.get(req)?.person;
}

export function rememberPerson(req: IncomingMessage, signedIn: SignedIn): void {
  requests.set(req, signedIn);
}

/** A personal API token in `Authorization: Bearer`, else the sign-in cookie. */
export async function signedInOf(req: IncomingMessage, services: BridgeServices): Promise<SignedIn | null> {
  const { people } = services;
  const bearer = bearerOf(req);
  const byToken = await people.personOfApiToken(bearer);
  if (byToken) return { person: byToken.person, via: "bearer" };
  const byCookie = await people.personOfSignIn(readCookie(req, services.auth.personCookieName));
  return byCookie ? { person: byCookie.person, via: "cookie" } : null;
}

export function personOfSocket(socket: Socket): Person | undefined {
  return (socket.data as { person?: Person }).person;
}

/** Who a decision is recorded as: the person's sign-in name, else the token's name or the channel. */
export function deciderOfRequest(req: IncomingMessage, services: BridgeServices, channel: string): string {
  const person = personOfRequest(req);
  return person ? person.name : services.auth.decider(services.auth.requestTokenName(req), channel);
}

export function deciderOfSocket(socket: Socket, services: BridgeServices, channel: string): string {
  const person = personOfSocket(socket);
  return person ? person.name : services.auth.decider(socket.data.tokenName as string | undefined, channel);
}

/** The sessions a list may show the request: null for all (the launch token, named tokens, admins). */
export async function visibleSessions(req: IncomingMessage, services: BridgeServices): Promise<Set<string> | null> {
  const person = personOfRequest(req);
  return person ? services.people.visibleSessionIds(person) : null;
}

/** A session a person just created is theirs (the launch token's sessions belong to no one: admins see them). */
export async function claimSession(req: IncomingMessage, services: BridgeServices, sessionId: string): Promise<void> {
  const person = personOfRequest(req);
  if (person) await services.people.recordOwner(person.id, sessionId);
}

/** Routes for a person's own things (their tokens) refuse the launch token, which is nobody. */
export function requirePerson(req: IncomingMessage): Person {
  const person = personOfRequest(req);
  if (!person)
    throw new WorldlineError(
      "people:bad_request",
      "Sign in as a person (or use a personal API token): the launch token and WORLDLINE_TOKENS belong to no one.",
    );
  return person;
}
