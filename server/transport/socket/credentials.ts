import type { Server, Socket } from "socket.io";
import { endsCredential, expiryOf, type Credential, type Level } from "../../people";
import type { BridgeServices } from "../services";

/**
 * A socket's access follows the credential it came with (SECURITY.md, "Sockets follow their
 * credential"): when that credential ends (revoked, signed out, the person disabled or changed,
 * a share link revoked, an access row removed or lowered) or expires, the socket is disconnected.
 * Disconnecting drops its subscriptions, presence and terminal views in one place (their
 * `disconnect` handlers); the page reconnects and is checked again with what it holds now.
 */

/** setTimeout's longest delay; a later expiry is re-armed when this one fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const RANK: Record<Level, number> = { view: 1, drive: 2, owner: 3 };

export function credentialOf(socket: Socket): Credential | undefined {
  return (socket.data as { credential?: Credential }).credential;
}

export function rememberCredential(socket: Socket, credential: Credential): void {
  (socket.data as { credential?: Credential }).credential = credential;
}

/** Closes a socket when its credential's own expiry passes (a sign-in's lifetime, a token's or a link's expiry). */
export function closeAtExpiry(socket: Socket): void {
  const credential = credentialOf(socket);
  const expiresAt = credential ? expiryOf(credential) : null;
  if (!expiresAt) return;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = expiresAt.getTime() - Date.now();
    if (left <= 0) return void socket.disconnect(true);
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    timer.unref();
  };
  arm();
  socket.on("disconnect", () => clearTimeout(timer));
}

/** Listens for ended credentials (this bridge's and, in team mode, the others') and closes the sockets they end. */
export function closeEndedCredentials(io: Server, services: BridgeServices): () => void {
  return services.people.credentials.on((event) => {
    if (event.kind === "access") return void recheckSession(io, services, event.sessionId);
    for (const socket of localSockets(io)) {
      const credential = credentialOf(socket);
      if (credential && endsCredential(event, credential)) socket.disconnect(true);
    }
  });
}

/**
 * A session's access rows changed: a person's socket that was let onto it at some level and now
 * has less (or none) is closed. Only sockets that touched the session are read again.
 */
function recheckSession(io: Server, services: BridgeServices, sessionId: string): void {
  for (const socket of localSockets(io)) {
    const credential = credentialOf(socket);
    if (credential?.kind !== "api_token" && credential?.kind !== "sign_in") continue;
    const before = levelsOf(socket).get(sessionId);
    if (!before) continue;
    void services.people
      .levelOn(credential.personId, sessionId)
      .then((now) => {
        if (!now || RANK[now] < RANK[before]) socket.disconnect(true);
      })
      // Fails closed: a check that cannot be made ends the socket's access.
      .catch(() => socket.disconnect(true));
  }
}

function localSockets(io: Server): Iterable<Socket> {
  return io.sockets.sockets.values();
}

/** The level a person's socket last passed the check with, per session (people-guard.ts records it). */
export function levelsOf(socket: Socket): Map<string, Level> {
  const data = socket.data as { levels?: Map<string, Level> };
  data.levels ??= new Map();
  return data.levels;
}
