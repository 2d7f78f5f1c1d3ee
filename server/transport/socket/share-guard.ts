import type { Socket } from "socket.io";
import { socketVerdict, type ShareCapability } from "../../sharing";
import type { BridgeServices } from "../services";
import { readCookie } from "../auth";
import { toWireError } from "../errors";
import { WorldlineError } from "../../errors";

/** The capability a socket connected with; absent for the owner (launch token). */
export function shareOf(socket: Socket): ShareCapability | undefined {
  return (socket.data as { share?: ShareCapability }).share;
}

/** A share token from the handshake: the HttpOnly cookie set by /share/<token>, or `auth.share` (scripts). */
export async function shareFromHandshake(socket: Socket, services: BridgeServices): Promise<ShareCapability | null> {
  const fromPayload = (socket.handshake.auth as { share?: unknown } | undefined)?.share;
  const fromCookie = readCookie(socket.request, services.auth.shareCookieName);
  return (await services.shares.resolve(fromPayload)) ?? (await services.shares.resolve(fromCookie));
}

/**
 * Every packet of a share-link socket passes here before any handler: commands outside
 * the link's session or scope are answered `auth:forbidden` and never reach a handler;
 * an expired or revoked link closes the socket.
 */
export function guardShareSocket(socket: Socket, services: BridgeServices): void {
  const share = shareOf(socket);
  if (!share) return;
  socket.use((packet, next) => {
    const [event, payload] = packet as [string, unknown, ...unknown[]];
    const ack = packet.findLast((part: unknown) => typeof part === "function") as
      ((response: unknown) => void) | undefined;
    const refuse = (message: string) =>
      ack?.({ ok: false, error: toWireError(new WorldlineError("auth:forbidden", message)).error });
    void (async () => {
      // Revocation and expiry close the socket (./credentials.ts); a packet racing the timer is refused here.
      if (share.expiresAt && share.expiresAt.getTime() <= Date.now()) {
        refuse("This share link has expired.");
        socket.disconnect(true);
        return;
      }
      const verdict = socketVerdict(share, event, payload);
      if (verdict === "allow") return next();
      if (verdict === "approval" && (await approvalIsOfSession(services, payload, share.sessionId))) return next();
      refuse(share.scope === "view" ? "This share link can only view the session." : "This share link cannot do that.");
      // Fails closed: a check that throws refuses the command.
    })().catch(() => refuse("Share link check failed."));
  });
}

async function approvalIsOfSession(services: BridgeServices, payload: unknown, sessionId: string): Promise<boolean> {
  const approvalId =
    typeof payload === "object" && payload !== null ? (payload as { approvalId?: unknown }).approvalId : undefined;
  if (typeof approvalId !== "string") return false;
  try {
    return (await services.approvals.get(approvalId)).session_id === sessionId;
  } catch {
    return false; // Unknown approval: refused like any other.
  }
}
