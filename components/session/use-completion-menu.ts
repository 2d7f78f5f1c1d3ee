"use client";

import { useState, type KeyboardEvent, type RefObject } from "react";
import { SLASH_COMMANDS } from "./slash-commands";
import { mentionAt, useMentionSearch } from "./use-mentions";

export interface CompletionEntry {
  key: string;
  label: string;
  hint?: string;
  apply: () => void;
}

/**
 * The menu above the prompt: files for an `@mention` at the caret, or commands while the text is a
 * bare `/word`. ↑/↓ move the pick, Tab or Enter take it (Enter sends an exact command as typed).
 */
export function useCompletionMenu({
  sessionId,
  text,
  caret,
  off,
  setText,
  setCaret,
  area,
}: {
  sessionId: string;
  text: string;
  caret: number;
  /** Shell mode: the line is a command for the terminal, nothing to complete. */
  off: boolean;
  setText: (text: string) => void;
  setCaret: (caret: number) => void;
  area: RefObject<HTMLTextAreaElement | null>;
}) {
  const [pick, setPick] = useState(0);
  const mention = off ? null : mentionAt(text, caret);
  const mentionFiles = useMentionSearch(sessionId, mention?.query ?? null);
  const slashQuery = !off && /^\/\w*$/.test(text) ? text.slice(1) : null;
  const slashMatches = slashQuery === null ? [] : SLASH_COMMANDS.filter((c) => c.name.startsWith(slashQuery));
  const entries: CompletionEntry[] = mention
    ? mentionFiles.map((file) => ({
        key: file,
        label: file,
        apply: () => {
          setText(`${text.slice(0, mention.start)}@${file} ${text.slice(caret)}`);
          const pos = mention.start + file.length + 2;
          requestAnimationFrame(() => area.current?.setSelectionRange(pos, pos));
          setCaret(pos);
        },
      }))
    : slashMatches.map((c) => ({
        key: c.name,
        label: `/${c.name}${c.args ? ` ${c.args}` : ""}`,
        hint: c.help,
        apply: () => setText(`/${c.name}${c.args ? " " : ""}`),
      }));
  const open = entries.length > 0;
  const picked = Math.min(pick, entries.length - 1);

  /** Handles the menu's keys; true when the key was the menu's. */
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (!open) return false;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      setPick((p) => (p + (event.key === "ArrowDown" ? 1 : -1) + entries.length) % entries.length);
      return true;
    }
    const exactCommand = !mention && slashMatches.some((c) => `/${c.name}` === text.trim());
    if (event.key === "Tab" || (event.key === "Enter" && !exactCommand)) {
      event.preventDefault();
      entries[picked].apply();
      setPick(0);
      return true;
    }
    return false;
  };

  return {
    entries,
    open,
    picked,
    kind: mention ? ("files" as const) : ("commands" as const),
    onKeyDown,
    /** The text changed: the pick starts over at the top. */
    reset: () => setPick(0),
  };
}
