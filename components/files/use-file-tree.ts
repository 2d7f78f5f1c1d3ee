"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import { FileTreeListing, GitStatus, type TreeEntry } from "@/server/protocol";
import { api, command, getSocket, onMessage, send } from "@/components/transport/client";

/** Change bursts (npm install, a big edit) are folded into one refresh. */
const REFRESH_DEBOUNCE_MS = 150;

/**
 * The workspace tree of a session: folders load when expanded, the bridge watches
 * what is loaded and says what changed, git markers refresh with it.
 */
export function useFileTree(sessionId: string) {
  const base = `/api/v1/sessions/${encodeURIComponent(sessionId)}/files`;
  const [dirs, setDirs] = useState<Record<string, TreeEntry[]>>({});
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set([""]));
  const [git, setGit] = useState<GitStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [changed, setChanged] = useState<{ paths: string[]; at: number } | null>(null);
  const [showIgnored, setShowIgnored] = useState(false);
  const loaded = useRef(new Set<string>());

  const load = useCallback(
    async (dir: string) => {
      try {
        const listing = await api(
          `${base}/tree?dir=${encodeURIComponent(dir)}&ignored=${showIgnored ? "1" : "0"}`,
          FileTreeListing,
        );
        loaded.current.add(dir);
        setDirs((current) => ({ ...current, [dir]: listing.entries }));
        setError(null);
      } catch (err) {
        loaded.current.delete(dir);
        setDirs((current) => {
          const { [dir]: _gone, ...rest } = current;
          return rest;
        });
        if (dir === "") setError(err instanceof Error ? err.message : String(err));
      }
    },
    [base, showIgnored],
  );

  const loadGit = useCallback(() => api(`${base}/git`, GitStatus).then(setGit, () => setGit(null)), [base]);

  useEffect(() => {
    void load("");
    void loadGit();
    const socket = getSocket();
    // Best effort: without it the tree is only refreshed by the page's own actions.
    const watch = () => void command("files.watch", { sessionId }).catch(() => undefined);
    let pending = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | null = null;
    const offChanged = onMessage("files.changed", (message) => {
      if (message.sessionId !== sessionId) return;
      for (const path of message.paths) pending.add(path);
      timer ??= setTimeout(() => {
        timer = null;
        const paths = [...pending];
        pending = new Set();
        const parents = new Set(paths.map((p) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "")));
        for (const dir of parents) if (loaded.current.has(dir)) void load(dir);
        for (const path of paths) if (loaded.current.has(path)) void load(path);
        void loadGit();
        setChanged({ paths, at: Date.now() });
      }, REFRESH_DEBOUNCE_MS);
    });
    socket.on("connect", watch);
    if (socket.connected) watch();
    return () => {
      offChanged();
      socket.off("connect", watch);
      if (timer) clearTimeout(timer);
      send("files.unwatch", { sessionId });
    };
  }, [sessionId, load, loadGit]);

  const toggle = useCallback(
    (dir: string) => {
      setExpanded((current) => {
        const next = new Set(current);
        if (next.has(dir)) next.delete(dir);
        else {
          next.add(dir);
          void load(dir);
        }
        return next;
      });
    },
    [load],
  );

  // Showing or hiding ignored files lists every open folder again.
  useEffect(() => {
    for (const dir of loaded.current) if (dir !== "") void load(dir);
    // Only the switch: the first load of the root is the effect above.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [showIgnored]);

  return {
    dirs,
    expanded,
    toggle,
    git,
    error,
    changed,
    showIgnored,
    setShowIgnored,
    refresh: () => void load(""),
  };
}
