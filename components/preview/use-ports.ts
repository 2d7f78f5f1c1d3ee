"use client";

import { useEffect, useState } from "react";
import { SessionPorts, type SessionPort } from "@/server/protocol";
import { api, command, getSocket, onMessage, send } from "@/components/transport/client";

/**
 * The session's listening ports, live: the list once, then `ports.changed` while the page follows
 * the session (the bridge reads the kernel only while someone follows). Null until known; a
 * session whose ports cannot be read (on a runner) says why in `error`.
 */
export function usePorts(sessionId: string): { ports: SessionPort[] | null; error: string | null } {
  const [ports, setPorts] = useState<SessionPort[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    const socket = getSocket();
    const watch = () =>
      void command("ports.watch", { sessionId }).then(
        (list) => live && setPorts(SessionPorts.parse(list)),
        (err: unknown) => live && setError(err instanceof Error ? err.message : String(err)),
      );
    void api(`/api/v1/sessions/${encodeURIComponent(sessionId)}/ports`, SessionPorts).then(
      (list) => live && setPorts(list),
      (err: unknown) => live && setError(err instanceof Error ? err.message : String(err)),
    );
    const off = onMessage("ports.changed", (message) => {
      if (message.sessionId === sessionId) setPorts(message.ports);
    });
    socket.on("connect", watch);
    if (socket.connected) watch();
    return () => {
      live = false;
      off();
      socket.off("connect", watch);
      send("ports.unwatch", { sessionId });
    };
  }, [sessionId]);

  return { ports, error };
}
