"use client";

import { useEffect, useRef, useState } from "react";
import { api } from "@/components/transport/client";
import { SessionSummary } from "@/server/protocol";

/**
 * The session's title in the header, renamed in place (click, type, Enter). The new title
 * reaches every tab through the session's `session.updated` event, not from here.
 */
export function SessionTitle({ sessionId, title }: { sessionId: string; title: string | undefined }) {
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The input replaces the button while renaming: the keyboard comes back to the button after.
  const button = useRef<HTMLButtonElement>(null);
  const renaming = useRef(false);
  useEffect(() => {
    if (draft !== null) renaming.current = true;
    else if (renaming.current) {
      renaming.current = false;
      button.current?.focus();
    }
  }, [draft]);

  const save = async () => {
    const next = draft?.trim();
    setDraft(null);
    if (!next || next === title) return;
    try {
      await api(`/api/v1/sessions/${encodeURIComponent(sessionId)}`, SessionSummary, {
        method: "PATCH",
        body: { title: next },
      });
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };

  if (draft !== null) {
    return (
      <input
        autoFocus
        className="min-w-0 max-w-[50%] flex-1 rounded border border-accent bg-bg px-1.5 py-0 font-medium text-fg outline-none"
        value={draft}
        maxLength={200}
        onChange={(event) => setDraft(event.target.value)}
        onBlur={() => void save()}
        onKeyDown={(event) => {
          if (event.key === "Enter") {
            // Else the Enter's activation lands on the title button, which gets the focus back, and reopens it.
            event.preventDefault();
            void save();
          } else if (event.key === "Escape") setDraft(null);
        }}
        aria-label="Session title"
        data-testid="session-title-input"
      />
    );
  }
  return (
    <button
      ref={button}
      type="button"
      className="min-w-0 truncate rounded px-1 text-left font-medium text-fg hover:bg-raised max-md:min-h-[44px]"
      title={error ? `Rename failed: ${error}` : "Rename this session"}
      onClick={() => setDraft(title ?? "")}
      aria-label={`${title ?? "Untitled session"}: rename`}
      data-testid="session-title"
    >
      {title ?? "…"}
    </button>
  );
}
