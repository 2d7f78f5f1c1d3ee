import * as z from "zod";

/**
 * What a socket connected with (SECURITY.md, "Sockets follow their credential"). The launch token
 * and WORLDLINE_TOKENS are configuration and are never revoked while the bridge runs; the others
 * end by the events below.
 */
export type Credential =
  | { kind: "launch" }
  | { kind: "named"; name: string }
  | { kind: "api_token"; id: string; personId: string; expiresAt: Date | null }
  | { kind: "sign_in"; id: string; personId: string; expiresAt: Date }
  | { kind: "share"; linkId: string; sessionId: string; expiresAt: Date | null };

/**
 * A credential, or what it stood for, no longer grants what it did: an API token revoked, a sign-out,
 * a person disabled or with a new role or password (every credential of theirs), a share link revoked,
 * a session's access rows changed (each socket on it is checked again). One message shape for this
 * process and for the other bridges of a team (server/team/credentials.ts).
 */
export const CredentialEnded = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("api_token"), id: z.string().min(1) }),
  z.object({ kind: z.literal("sign_in"), id: z.string().min(1) }),
  z.object({ kind: z.literal("person"), personId: z.string().min(1) }),
  z.object({ kind: z.literal("share"), linkId: z.string().min(1) }),
  z.object({ kind: z.literal("access"), sessionId: z.string().min(1) }),
]);
export type CredentialEnded = z.infer<typeof CredentialEnded>;

type Listener = (event: CredentialEnded) => void;

/**
 * The one in-process signal that a credential ended. server/people and server/sharing call `ended`;
 * socket transport listens and closes the sockets that came with it; in team mode the event is also
 * published to the other bridges, which call `heard` (told here, never published again).
 */
export class Credentials {
  private readonly listeners = new Set<Listener>();
  private readonly publishers = new Set<Listener>();

  ended(event: CredentialEnded): void {
    for (const publish of this.publishers) publish(event);
    this.heard(event);
  }

  /** An event from another bridge (already parsed with CredentialEnded). */
  heard(event: CredentialEnded): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        // One failing listener must not keep the others (the socket closers) from hearing.
        console.error("[worldline] credential listener failed:", error);
      }
    }
  }

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Team mode: every event that starts here also goes to the other bridges. */
  publishTo(publish: Listener): () => void {
    this.publishers.add(publish);
    return () => this.publishers.delete(publish);
  }
}

/** Whether a socket that came with `credential` (as `personId`, when a person) loses it by `event`. */
export function endsCredential(event: CredentialEnded, credential: Credential): boolean {
  switch (event.kind) {
    case "api_token":
      return credential.kind === "api_token" && credential.id === event.id;
    case "sign_in":
      return credential.kind === "sign_in" && credential.id === event.id;
    case "person":
      return (
        (credential.kind === "api_token" || credential.kind === "sign_in") && credential.personId === event.personId
      );
    case "share":
      return credential.kind === "share" && credential.linkId === event.linkId;
    case "access":
      // Checked against the person's level again by the caller; links are not access rows.
      return false;
  }
}

/** When a credential expires by itself (null: never). */
export function expiryOf(credential: Credential): Date | null {
  return credential.kind === "api_token" || credential.kind === "sign_in" || credential.kind === "share"
    ? credential.expiresAt
    : null;
}
