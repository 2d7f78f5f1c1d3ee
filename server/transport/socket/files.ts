import type { Server, Socket } from "socket.io";
import { FilesWatchCommand, type FilesChanged } from "../../protocol";
import type { BridgeServices } from "../services";
import { onCommand } from "./handler";

/** Which sessions (and so workspaces, on this machine or a runner) each socket follows for `files.changed`. */
const watching = new WeakMap<Socket, Map<string, { root: string; runner: string | null }>>();

export function registerFileHandlers(socket: Socket, services: BridgeServices): void {
  const mine = new Map<string, { root: string; runner: string | null }>();
  watching.set(socket, mine);
  onCommand(socket, "files.watch", FilesWatchCommand, async ({ sessionId }) => {
    const session = await services.sessions.get(sessionId);
    mine.set(sessionId, { root: session.workspace.path, runner: session.runner ?? null });
    return null;
  });
  onCommand(socket, "files.unwatch", FilesWatchCommand, async ({ sessionId }) => {
    mine.delete(sessionId);
    return null;
  });
}

/** Fans workspace changes out to the sockets following a session on that workspace. */
export function forwardFileChanges(io: Server, services: BridgeServices): () => void {
  const fanOut = (runner: string | null, workspace: string, paths: string[]) => {
    for (const socket of io.sockets.sockets.values()) {
      for (const [sessionId, followed] of watching.get(socket) ?? []) {
        if (followed.root === workspace && followed.runner === runner)
          socket.emit("files.changed", { sessionId, paths } satisfies FilesChanged);
      }
    }
  };
  return services.hosts.onFilesChanged(fanOut);
}
