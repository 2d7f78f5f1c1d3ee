"use client";

import { FileSearchResult } from "@/server/protocol";
import { useEffect, useState } from "react";
import { api } from "@/components/transport/client";

/** Keystrokes within this time make one search request. */
const MENTION_DEBOUNCE_MS = 80;

/** The `@word` being typed just before the caret, if any. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const match = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, caret));
  return match ? { start: caret - match[2].length - 1, query: match[2] } : null;
}

/** Fuzzy file matches for an `@` mention, from the bridge's cached workspace index. */
export function useMentionSearch(sessionId: string, query: string | null): string[] {
  const [files, setFiles] = useState<string[]>([]);
  useEffect(() => {
    if (query === null) return setFiles([]);
    let stale = false;
    const timer = setTimeout(() => {
      api(
        `/api/v1/sessions/${encodeURIComponent(sessionId)}/files/search?limit=12&q=${encodeURIComponent(query)}`,
        FileSearchResult,
      ).then(
        (result) => !stale && setFiles(result.files),
        () => !stale && setFiles([]),
      );
    }, MENTION_DEBOUNCE_MS);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [sessionId, query]);
  return files;
}
