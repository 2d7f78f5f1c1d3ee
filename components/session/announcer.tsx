"use client";

import { useEffect, useRef, useState } from "react";
import type { TranscriptState } from "@/server/protocol";
import { announcementsBetween } from "./announcements";

/**
 * A polite live region for the session: what `announcementsBetween` finds in each state change.
 * The region is always in the page (a region added with its text is not read), and the state
 * when the session first goes live (its history) is the baseline, so a reload announces nothing.
 * Each announcement is a new node (keyed by a count), so the same words twice in a row (two
 * turns finishing) change the DOM twice and are read twice.
 */
export function Announcer({ state, live, error }: { state: TranscriptState; live: boolean; error: string | null }) {
  const previous = useRef<TranscriptState | null>(null);
  const [message, setMessage] = useState({ count: 0, text: "" });
  const say = (text: string) => setMessage((last) => ({ count: last.count + 1, text }));

  useEffect(() => {
    const before = previous.current;
    // Until the first subscribe answered, the state is history arriving: the baseline, not news.
    if (!live && !before) return;
    previous.current = state;
    if (!before) return;
    const said = announcementsBetween(before, state);
    if (said.length > 0) say(said.join(" "));
  }, [state, live]);

  useEffect(() => {
    if (error) say(`Error: ${error}`);
  }, [error]);

  return (
    <div className="sr-only" role="status" aria-live="polite" aria-atomic="true" data-testid="announcer">
      {message.text ? <span key={message.count}>{message.text}</span> : null}
    </div>
  );
}
