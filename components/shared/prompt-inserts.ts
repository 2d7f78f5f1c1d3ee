"use client";

import { useEffect, useRef } from "react";

/** Something another panel puts into a session's prompt: text to add and images to attach (the Preview panel's picked element). */
export interface PromptInsert {
  text: string;
  images: File[];
}

const inserts = new EventTarget();

export function insertIntoPrompt(sessionId: string, insert: PromptInsert): void {
  inserts.dispatchEvent(new CustomEvent<PromptInsert>(sessionId, { detail: insert }));
}

/** The prompt input's side: `handle` runs for each insert into this session's prompt. */
export function usePromptInserts(sessionId: string, handle: (insert: PromptInsert) => void): void {
  const latest = useRef(handle);
  useEffect(() => {
    latest.current = handle;
  });
  useEffect(() => {
    const listener = (event: Event) => latest.current((event as CustomEvent<PromptInsert>).detail);
    inserts.addEventListener(sessionId, listener);
    return () => inserts.removeEventListener(sessionId, listener);
  }, [sessionId]);
}
