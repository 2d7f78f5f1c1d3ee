"use client";

import { useEffect, useRef, useState } from "react";
import type { TranscriptState } from "@/server/protocol";
import { announcementsBetween } from "./announcements";

/**
 * A polite live region for the session: what `announcementsBetween` finds in each state change.
 * The region is always in the page (a region added with its text is not read), and the state
 * when the session first goes live (its history) is the baseline, so a reload announces nothing.
 */
export function Announcer({ state, live, error }: { state: TranscriptState; live: boolean; error: string | null }) {
  const previous = useRef<TranscriptState | null>(null);
  const [message, setMessage] = useState("");

  useEffect(() => {
    const before = previous.current;
    // Until the first subscribe answered, the state is history arriving: the baseline, not news.
    if (!live && !before) return;
    previous.current = state;
    if (!before) return;
    const said = announcementsBetween(before, state);
    if (said.length > 0) setMessage(said.join(" "));
  }, [state, live]);

  useEffect(() => {
    if (error) setMessage(`Error: ${error}`);
  }, [error]);

  return (
    <div className="sr-only" role="status" aria-live="polite" aria-atomic="true" data-testid="announcer">
      {message}
    </div>
  );
}
