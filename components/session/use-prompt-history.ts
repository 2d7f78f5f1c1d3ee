"use client";

import { useEffect, useRef, type KeyboardEvent } from "react";

/** Prompts remembered per workspace for ↑/↓. */
const HISTORY_LIMIT = 200;

interface History {
  items: string[];
  /** -1 while editing the draft, else the prompt shown. */
  index: number;
  /** What was typed before ↑ started browsing. */
  draft: string;
}

/**
 * The prompts sent from a workspace, kept in localStorage: `remember` after a send, `browse`
 * on ↑/↓ when the caret is on the first/last line (elsewhere the keys move the caret).
 */
export function usePromptHistory(workspace: string) {
  const history = useRef<History>({ items: [], index: -1, draft: "" });
  const key = `worldline.history.${workspace}`;

  useEffect(() => {
    try {
      history.current = { items: JSON.parse(localStorage.getItem(key) ?? "[]") as string[], index: -1, draft: "" };
    } catch {
      history.current = { items: [], index: -1, draft: "" }; // unreadable history starts afresh
    }
  }, [key]);

  const remember = (prompt: string) => {
    const items = [...history.current.items.filter((item) => item !== prompt), prompt].slice(-HISTORY_LIMIT);
    history.current = { items, index: -1, draft: "" };
    try {
      localStorage.setItem(key, JSON.stringify(items));
    } catch {
      // History is a convenience; a full quota only loses it.
    }
  };

  /** Shows the previous (-1) or next (1) prompt through `show`, when the caret is at the edge. */
  const browse = (
    direction: -1 | 1,
    event: KeyboardEvent<HTMLTextAreaElement>,
    text: string,
    show: (text: string) => void,
  ) => {
    const el = event.currentTarget;
    const atEdge =
      direction === -1 ? !text.slice(0, el.selectionStart).includes("\n") : !text.slice(el.selectionEnd).includes("\n");
    const h = history.current;
    if (!atEdge || h.items.length === 0) return;
    if (direction === -1 && h.index === -1) h.draft = text;
    const index = h.index === -1 ? (direction === -1 ? h.items.length - 1 : -1) : h.index + direction;
    if (index < -1 || index >= h.items.length) return;
    event.preventDefault();
    h.index = index;
    show(index === -1 ? h.draft : h.items[index]);
  };

  return { remember, browse };
}
