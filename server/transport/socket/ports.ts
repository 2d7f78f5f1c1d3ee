import type { Socket } from "socket.io";
import { PortsWatchCommand, type PortsChanged } from "../../protocol";
import type { BridgeServices } from "../services";
import { onCommand } from "./handler";

/**
 * `ports.watch` / `ports.unwatch`: a tab follows a session's listening ports and gets
 * `ports.changed` when they change (the bridge polls the kernel only while someone follows).
 * The answer to `ports.watch` is the current list.
 */
export function registerPortHandlers(socket: Socket, services: BridgeServices): void {
  const previews = services.previews;
  if (!previews) return;
  const watching = new Map<string, () => void>();
  onCommand(socket, "ports.watch", PortsWatchCommand, async ({ sessionId }) => {
    const ports = await previews.list(sessionId);
    if (!watching.has(sessionId)) {
      const stop = previews.ports.watch(sessionId, ports, (changed) => {
        if (socket.connected) socket.emit("ports.changed", { sessionId, ports: changed } satisfies PortsChanged);
      });
      watching.set(sessionId, stop);
    }
    return ports;
  });
  onCommand(socket, "ports.unwatch", PortsWatchCommand, async ({ sessionId }) => {
    watching.get(sessionId)?.();
    watching.delete(sessionId);
    return null;
  });
  socket.on("disconnect", () => {
    for (const stop of watching.values()) stop();
    watching.clear();
  });
}
