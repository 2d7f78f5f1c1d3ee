"use client";

import { useEffect } from "react";
import type { PresenceState } from "@/server/protocol";
import { EyeIcon } from "@/components/shared/icons";

interface PresenceBarProps {
  presence: PresenceState | null;
  /** True while a turn runs in this session (from the event log). */
  running: boolean;
  noteTyping: () => void;
}

/**
 * Who else is here: viewer count, another tab typing, a turn started from another tab.
 * Keystrokes in this tab's prompt become the (throttled) typing signal.
 */
export function PresenceBar({ presence, running, noteTyping }: PresenceBarProps) {
  useEffect(() => {
    // The prompt input is its own component; listening here keeps presence out of it.
    const onInput = (event: Event) => {
      if (event.target instanceof HTMLElement && event.target.closest("[data-testid=prompt-input]")) noteTyping();
    };
    document.addEventListener("input", onInput, true);
    return () => document.removeEventListener("input", onInput, true);
  }, [noteTyping]);

  if (!presence) return null;
  const others = presence.viewers.filter((viewer) => viewer.id !== presence.you);
  const typing = others.filter((viewer) => viewer.typing);
  const runningElsewhere = running && presence.runningBy !== null && presence.runningBy !== presence.you;
  const count = presence.viewers.length;
  return (
    <span className="flex items-center gap-2 text-xs" data-testid="presence">
      {runningElsewhere ? (
        <span className="rounded bg-accent/15 px-1.5 py-0.5 text-accent" data-testid="presence-running-elsewhere">
          Running from another tab
        </span>
      ) : null}
      {typing.length > 0 ? (
        <span className="italic" data-testid="presence-typing">
          {typing.length === 1 ? `${label(typing[0])} is typing…` : `${typing.length} tabs are typing…`}
        </span>
      ) : null}
      <span
        className="flex items-center gap-1"
        title={presence.viewers
          .map((viewer) => `${viewer.id === presence.you ? "this tab" : label(viewer)} (${viewer.access})`)
          .join("\n")}
        data-testid="presence-viewers"
        data-count={count}
      >
        <EyeIcon />
        <span aria-hidden>{count}</span>
        <span className="sr-only">
          {count} {count === 1 ? "viewer" : "viewers"}
        </span>
      </span>
    </span>
  );
}

function label(viewer: PresenceState["viewers"][number]): string {
  const where = viewer.device === "phone" ? "A phone" : "Another tab";
  return viewer.access === "owner" ? where : `${where} (shared)`;
}
