"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { LiveTranscript, emptyTranscript, type PresenceState, type TranscriptState } from "@/server/protocol";
import { command, getSocket, onMessage, send } from "@/components/transport/client";
import { checkedEvents } from "@/components/shared/checked-events";

export type ConnectionState = "connecting" | "live" | "offline";

/** A bridge that shut down closed our socket itself; socket.io does not retry that, we do. */
const RECONNECT_AFTER_SERVER_CLOSE_MS = 500;
/** While typing, "typing" is re-sent at most this often (the bridge expires it after 5 s). */
const TYPING_REFRESH_MS = 2_000;
/** No keystroke for this long means the tab stopped typing. */
const TYPING_IDLE_MS = 3_000;

/**
 * A session's live transcript: subscribes with the last seq (and its time) this tab
 * has, applies the missed events and then live ones strictly in order, and resubscribes
 * after every reconnect or gap. A new tab on a long session starts from the bridge's
 * snapshot; a tab whose events the bridge lost (crash) is reset to the bridge's log.
 */
export function useSession(sessionId: string) {
  const [state, setState] = useState<TranscriptState>(emptyTranscript);
  const [connection, setConnection] = useState<ConnectionState>("connecting");
  const [error, setError] = useState<string | null>(null);
  const [presence, setPresence] = useState<PresenceState | null>(null);
  const typing = useRef<{ sentAt: number; idle: ReturnType<typeof setTimeout> | null }>({ sentAt: 0, idle: null });

  useEffect(() => {
    const socket = getSocket();
    const live = new LiveTranscript();
    let cancelled = false;
    let subscribing = false;
    const publish = () => setState(live.state);
    const subscribe = async () => {
      if (subscribing) return;
      subscribing = true;
      try {
        const result = await command("session.subscribe", {
          sessionId,
          ...live.resumeFrom(),
        });
        if (cancelled) return;
        if (live.subscribed({ ...result, events: checkedEvents(result.events) })) publish();
        setConnection("live");
        setError(null);
      } catch (err) {
        if (!cancelled) setError(err instanceof Error ? err.message : String(err));
      } finally {
        subscribing = false;
      }
      // Live events past a hole arrived meanwhile: ask again for what is missing.
      if (!cancelled && live.gap()) void subscribe();
    };
    const offEvents = onMessage("session.events", (message) => {
      if (message.sessionId !== sessionId) return;
      if (live.live(checkedEvents(message.events))) publish();
      if (live.gap()) void subscribe();
    });
    const offPresence = onMessage("presence.state", (message) => {
      if (message.sessionId === sessionId) setPresence(message);
    });
    const onDisconnect = (reason: string) => {
      setConnection("offline");
      setPresence(null);
      if (reason === "io server disconnect")
        setTimeout(() => !cancelled && !socket.connected && socket.connect(), RECONNECT_AFTER_SERVER_CLOSE_MS);
    };
    const onConnect = () => void subscribe();
    socket.on("connect", onConnect);
    socket.on("disconnect", onDisconnect);
    if (socket.connected) void subscribe();
    return () => {
      cancelled = true;
      offEvents();
      offPresence();
      socket.off("connect", onConnect);
      socket.off("disconnect", onDisconnect);
      send("session.unsubscribe", { sessionId });
    };
  }, [sessionId]);

  /** Call on every keystroke in the prompt: sends a throttled "typing" and a "stopped" when idle. */
  const noteTyping = useCallback(() => {
    const now = Date.now();
    const current = typing.current;
    if (now - current.sentAt > TYPING_REFRESH_MS) {
      current.sentAt = now;
      void command("presence.typing", { sessionId, typing: true }).catch(() => undefined); // Presence is best effort.
    }
    if (current.idle) clearTimeout(current.idle);
    current.idle = setTimeout(() => {
      current.sentAt = 0;
      current.idle = null;
      // Best effort: the bridge drops a typing flag nobody refreshes.
      void command("presence.typing", { sessionId, typing: false }).catch(() => undefined);
    }, TYPING_IDLE_MS);
  }, [sessionId]);

  return { state, connection, error, presence, noteTyping };
}
