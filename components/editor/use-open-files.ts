"use client";

import { useCallback, useState } from "react";
import { FileContent, SavedFile } from "@/server/protocol";
import { api, BridgeError } from "@/components/transport/client";

export type EditorTab =
  | { kind: "file"; id: string; path: string }
  | { kind: "diff"; id: string; title: string; diff: string }
  | { kind: "changes"; id: "changes" };

export interface Buffer {
  text: string;
  /** What is on disk as far as we know: the hash the next save must match. */
  hash: string;
  saved: string;
  binary: boolean;
  conflict: "changed_on_disk" | "save_refused" | null;
  error: string | null;
}

/** Open tabs and file buffers: load, edit, save with the loaded hash, and notice changes on disk. */
export function useOpenFiles(sessionId: string) {
  const base = `/api/v1/sessions/${encodeURIComponent(sessionId)}/files/content`;
  const [tabs, setTabs] = useState<EditorTab[]>([]);
  const [active, setActive] = useState<string | null>(null);
  const [buffers, setBuffers] = useState<Record<string, Buffer>>({});
  /** A line to bring into view once the file shows (a diagnostic's line number in a tool card). */
  const [reveal, setReveal] = useState<{ path: string; line: number; at: number } | null>(null);

  const patch = (path: string, change: Partial<Buffer>) =>
    setBuffers((current) => (current[path] ? { ...current, [path]: { ...current[path], ...change } } : current));

  const load = useCallback(
    async (path: string) => {
      try {
        const file = await api(`${base}?path=${encodeURIComponent(path)}`, FileContent);
        setBuffers((current) => ({
          ...current,
          [path]: {
            text: file.content,
            saved: file.content,
            hash: file.hash,
            binary: file.binary,
            conflict: null,
            error: null,
          },
        }));
      } catch (err) {
        setBuffers((current) => ({
          ...current,
          [path]: {
            text: "",
            saved: "",
            hash: "",
            binary: false,
            conflict: null,
            error: err instanceof Error ? err.message : String(err),
          },
        }));
      }
    },
    [base],
  );

  const openFile = useCallback(
    (path: string, line?: number) => {
      if (line !== undefined) setReveal({ path, line, at: Date.now() });
      const id = `file:${path}`;
      setTabs((current) => (current.some((t) => t.id === id) ? current : [...current, { kind: "file", id, path }]));
      setActive(id);
      setBuffers((current) => {
        if (!current[path]) void load(path);
        return current;
      });
    },
    [load],
  );

  const openDiff = useCallback((title: string, diff: string) => {
    const id = `diff:${title}`;
    setTabs((current) => [...current.filter((t) => t.id !== id), { kind: "diff", id, title, diff }]);
    setActive(id);
  }, []);

  const openChanges = useCallback(() => {
    setTabs((current) =>
      current.some((t) => t.id === "changes") ? current : [...current, { kind: "changes", id: "changes" }],
    );
    setActive("changes");
  }, []);

  const close = useCallback((id: string) => {
    setTabs((current) => {
      const index = current.findIndex((t) => t.id === id);
      const next = current.filter((t) => t.id !== id);
      setActive((was) => (was === id ? (next[Math.min(index, next.length - 1)]?.id ?? null) : was));
      return next;
    });
  }, []);

  const edit = (path: string, text: string) => patch(path, { text });

  const save = async (path: string, force = false) => {
    const buffer = buffers[path];
    if (!buffer) return;
    try {
      const result = await api(base, SavedFile, {
        method: "PUT",
        body: { path, content: buffer.text, baseHash: buffer.hash, force },
      });
      patch(path, { hash: result.hash, saved: buffer.text, conflict: null, error: null });
    } catch (err) {
      if (err instanceof BridgeError && err.status === 409) patch(path, { conflict: "save_refused" });
      else patch(path, { error: err instanceof Error ? err.message : String(err) });
    }
  };

  /** Files that changed on disk: clean buffers reload, edited ones get a conflict banner. */
  const onDiskChange = useCallback(
    async (paths: string[]) => {
      for (const path of paths) {
        const buffer = buffers[path];
        if (!buffer) continue;
        // Unreadable now (deleted, offline): the buffer stays as it is.
        const file = await api(`${base}?path=${encodeURIComponent(path)}`, FileContent).catch(() => null);
        if (!file || file.hash === buffer.hash) continue;
        if (buffer.text === buffer.saved)
          setBuffers((c) => ({
            ...c,
            [path]: { ...c[path], text: file.content, saved: file.content, hash: file.hash, conflict: null },
          }));
        else patch(path, { conflict: "changed_on_disk" });
      }
    },
    [base, buffers],
  );

  return {
    sessionId,
    reveal,
    tabs,
    active,
    setActive,
    buffers,
    openFile,
    openDiff,
    openChanges,
    close,
    edit,
    save,
    reload: load,
    onDiskChange,
  };
}
