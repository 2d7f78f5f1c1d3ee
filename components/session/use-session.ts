"use client";

import { useEffect, useRef, useState } from "react";
import {
  applyEvents,
  emptyTranscript,
  type EventEnvelope,
  type SubscribeResult,
  type TranscriptState,
} from "@/server/protocol";
import { command, getSocket } from "@/components/transport/client";

export type ConnectionState = "connecting" | "live" | "offline";

/**
 * A session's live transcript: subscribes with the last seq this tab has, folds
 * the missed events and then live ones, and resubscribes after every reconnect.
 */
export function useSession(sessionId: string) {
  const [state, setState] = useState<TranscriptState>(emptyTranscript);
  const [connection, setConnection] = useState<ConnectionState>("connecting");
  const [error, setError] = useState<string | null>(null);
  const stateRef = useRef(state);
  stateRef.current = state;

  useEffect(() => {
    const socket = getSocket();
    let cancelled = false;
    const apply = (events: EventEnvelope[]) => {
      if (events.length === 0) return;
      setState((current) => {
        const next = applyEvents(current, events);
        stateRef.current = next;
        return next;
      });
    };
    const onEvents = (message: { sessionId: string; events: EventEnvelope[] }) => {
      if (message.sessionId === sessionId) apply(message.events);
    };
    const subscribe = async () => {
      try {
        const result = await command<"session.subscribe", SubscribeResult>("session.subscribe", {
          sessionId,
          afterSeq: stateRef.current.lastSeq,
        });
        if (cancelled) return;
        apply(result.events);
        setConnection("live");
        setError(null);
      } catch (err) {
        if (!cancelled) setError(err instanceof Error ? err.message : String(err));
      }
    };
    const onDisconnect = () => setConnection("offline");
    socket.on("session.events", onEvents);
    socket.on("connect", subscribe);
    socket.on("disconnect", onDisconnect);
    if (socket.connected) void subscribe();
    return () => {
      cancelled = true;
      socket.off("session.events", onEvents);
      socket.off("connect", subscribe);
      socket.off("disconnect", onDisconnect);
      if (socket.connected) socket.emit("session.unsubscribe", { sessionId });
    };
  }, [sessionId]);

  return { state, connection, error };
}
