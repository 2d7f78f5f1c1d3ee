import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";

/** What answers preview hosts; everything it declines goes on to the IDE. */
export interface PreviewDoor {
  handleRequest(req: IncomingMessage, res: ServerResponse): boolean;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
}

/**
 * Puts the preview proxy in front of every other listener of the bridge's server (the IDE's
 * handler, socket.io's and the runners' engine.io, which wrap the request listeners they find):
 * a preview host's `/socket.io/` or `/api/v1/…` is the previewed app's, never the IDE's. Called
 * once, after everything else has attached.
 */
export function servePreviewsFirst(server: HttpServer, door: PreviewDoor): void {
  const requestListeners = server.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  const upgradeListeners = server.listeners("upgrade") as ((
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
  ) => void)[];
  server.removeAllListeners("request");
  server.removeAllListeners("upgrade");
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    if (door.handleRequest(req, res)) return;
    for (const listener of requestListeners) listener.call(server, req, res);
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (door.handleUpgrade(req, socket, head)) return;
    for (const listener of upgradeListeners) listener.call(server, req, socket, head);
  });
}
