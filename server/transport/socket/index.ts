import type { Server as HttpServer } from "node:http";
import { Server, type ServerOptions } from "socket.io";
import { MAX_PROMPT_MESSAGE_BYTES } from "../../protocol";
import type { BridgeServices } from "../services";
import { readCookie } from "../auth";
import { CommandCache } from "./handler";
import { registerSessionHandlers } from "./sessions";
import { registerApprovalHandlers } from "./approvals";
import { registerBoardHandlers } from "./board";
import { attachPtyBroadcast, registerPtyHandlers } from "./pty";
import { forwardFileChanges, registerFileHandlers } from "./files";
import { registerPortHandlers } from "./ports";
import { Presence } from "./presence";
import { guardShareSocket, shareFromHandshake } from "./share-guard";
import { closeAtExpiry, closeEndedCredentials, rememberCredential } from "./credentials";
import { guardPersonSocket, personFromHandshake } from "./people-guard";

/** Socket frames above this are refused; pastes and prompts (with their images) fit, floods don't. */
const MAX_SOCKET_MESSAGE_BYTES = Math.max(2 * 1024 * 1024, MAX_PROMPT_MESSAGE_BYTES);

/** socket.io on the bridge's own port and origin. */
export function attachSocketServer(
  httpServer: HttpServer,
  services: BridgeServices,
  options: { adapter?: ServerOptions["adapter"] } = {},
): Server {
  const { auth } = services;
  const io = new Server(httpServer, {
    serveClient: false,
    // Terminal output and deltas are small and frequent: compression costs more CPU than it saves on loopback.
    perMessageDeflate: false,
    httpCompression: false,
    maxHttpBufferSize: MAX_SOCKET_MESSAGE_BYTES,
    // The `cors` option rejects nothing; this is where Host and Origin are enforced,
    // for the polling handshake and the websocket upgrade alike.
    allowRequest: (req, callback) => callback(null, auth.hostAllowed(req) && auth.originAllowed(req)),
    // Team mode: rooms span the bridges of the deployment (server/bus/redis-link.ts).
    ...(options.adapter ? { adapter: options.adapter } : {}),
  });
  const commands = new CommandCache();
  const presence = new Presence(services.log, services.push);

  io.use((socket, next) => {
    const fromPayload = (socket.handshake.auth as { token?: unknown } | undefined)?.token;
    const fromCookie = readCookie(socket.request, auth.cookieName);
    const tokenName = auth.tokenName(fromPayload) ?? auth.tokenName(fromCookie);
    if (tokenName) {
      socket.data.tokenName = tokenName;
      rememberCredential(socket, tokenName === "default" ? { kind: "launch" } : { kind: "named", name: tokenName });
      return next();
    }
    // A named person (enforced per packet by guardPersonSocket), else a share link: one session,
    // one scope, enforced per packet by guardShareSocket.
    void (async () => {
      const signedIn = await personFromHandshake(socket, services);
      if (signedIn) {
        socket.data.person = signedIn.person;
        rememberCredential(socket, signedIn.credential);
        return next();
      }
      const share = await shareFromHandshake(socket, services);
      if (!share) return next(new Error("unauthorized: missing or wrong token"));
      socket.data.share = share;
      rememberCredential(socket, {
        kind: "share",
        linkId: share.linkId,
        sessionId: share.sessionId,
        expiresAt: share.expiresAt,
      });
      next();
      // Fails closed: a check that throws refuses the connection.
    })().catch(() => next(new Error("unauthorized: credentials check failed")));
  });

  io.on("connection", (socket) => {
    closeAtExpiry(socket);
    guardShareSocket(socket, services);
    guardPersonSocket(socket, services);
    registerSessionHandlers(socket, services, commands, presence);
    registerFileHandlers(socket, services);
    registerPortHandlers(socket, services);
    registerApprovalHandlers(socket, services, commands);
    registerBoardHandlers(socket, services);
    registerPtyHandlers(socket, services, commands);
  });
  attachPtyBroadcast(io, services);
  forwardFileChanges(io, services);
  closeEndedCredentials(io, services);
  return io;
}
