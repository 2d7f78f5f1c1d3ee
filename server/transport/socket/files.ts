import type { Server, Socket } from "socket.io";
import { FilesWatchCommand, type FilesChanged } from "../../protocol";
import type { BridgeServices } from "../services";
import { onCommand } from "./handler";

/** Which sessions (and so workspaces) each socket follows for `files.changed`. */
const watching = new WeakMap<Socket, Map<string, string>>();

export function registerFileHandlers(socket: Socket, services: BridgeServices): void {
  const mine = new Map<string, string>();
  watching.set(socket, mine);
  onCommand(socket, "files.watch", FilesWatchCommand, async ({ sessionId }) => {
    const session = await services.sessions.get(sessionId);
    mine.set(sessionId, session.workspace.path);
    return null;
  });
  onCommand(socket, "files.unwatch", FilesWatchCommand, async ({ sessionId }) => {
    mine.delete(sessionId);
    return null;
  });
}

/** Fans workspace changes out to the sockets following a session on that workspace. */
export function forwardFileChanges(io: Server, services: BridgeServices): () => void {
  return services.files.onChange((workspace, paths) => {
    for (const socket of io.sockets.sockets.values()) {
      for (const [sessionId, root] of watching.get(socket) ?? []) {
        if (root === workspace) socket.emit("files.changed", { sessionId, paths } satisfies FilesChanged);
      }
    }
  });
}
