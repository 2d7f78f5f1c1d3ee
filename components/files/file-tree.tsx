"use client";

import { useMemo, useRef, type KeyboardEvent } from "react";
import type { GitMarker, GitStatus, TreeEntry } from "@/server/protocol";

const MARKER_STYLE: Record<GitMarker, string> = {
  M: "text-warn",
  A: "text-ok",
  U: "text-ok",
  D: "text-danger",
  R: "text-accent",
  C: "text-danger",
};

interface Row {
  entry: TreeEntry;
  depth: number;
}

/** The workspace tree: arrow keys move, Enter/Space opens or expands, git markers at the right. */
export function FileTree({
  dirs,
  expanded,
  toggle,
  git,
  error,
  activePath,
  onOpen,
}: {
  dirs: Record<string, TreeEntry[]>;
  expanded: Set<string>;
  toggle: (dir: string) => void;
  git: GitStatus | null;
  error: string | null;
  activePath: string | null;
  onOpen: (path: string) => void;
}) {
  const list = useRef<HTMLDivElement>(null);
  const rows = useMemo(() => {
    const out: Row[] = [];
    const walk = (dir: string, depth: number) => {
      for (const entry of dirs[dir] ?? []) {
        out.push({ entry, depth });
        if (entry.type === "dir" && expanded.has(entry.path)) walk(entry.path, depth + 1);
      }
    };
    walk("", 0);
    return out;
  }, [dirs, expanded]);

  const dirMarkers = useMemo(() => {
    const marked = new Set<string>();
    for (const path of Object.keys(git?.markers ?? {})) {
      const parts = path.split("/");
      for (let i = 1; i < parts.length; i++) marked.add(parts.slice(0, i).join("/"));
    }
    return marked;
  }, [git]);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const buttons = [...(list.current?.querySelectorAll<HTMLButtonElement>("[data-tree-row]") ?? [])];
    const index = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      buttons[Math.max(0, Math.min(buttons.length - 1, index + (event.key === "ArrowDown" ? 1 : -1)))]?.focus();
    }
  };

  if (error)
    return (
      <div className="p-3 text-danger" data-testid="file-tree-error">
        {error}
      </div>
    );
  if (!dirs[""])
    return (
      <div className="p-3 text-muted" data-testid="file-tree-loading">
        Loading files…
      </div>
    );
  return (
    <div
      ref={list}
      className="min-h-0 flex-1 overflow-auto py-1 font-mono text-xs"
      role="tree"
      aria-label="Workspace files"
      data-testid="file-tree"
      onKeyDown={onKeyDown}
    >
      {rows.length === 0 ? <div className="px-3 py-2 text-muted">This folder is empty.</div> : null}
      {rows.map(({ entry, depth }) => {
        const marker = git?.markers[entry.path];
        const isDir = entry.type === "dir";
        const open = isDir && expanded.has(entry.path);
        return (
          <button
            key={entry.path}
            type="button"
            role="treeitem"
            aria-expanded={isDir ? open : undefined}
            aria-selected={activePath === entry.path}
            data-tree-row
            data-testid="tree-item"
            data-path={entry.path}
            data-git={marker ?? ""}
            className={`flex w-full items-center gap-1 py-[3px] pr-2 text-left hover:bg-raised ${activePath === entry.path ? "bg-accent/15 text-fg" : ""}`}
            style={{ paddingLeft: 8 + depth * 12 }}
            onClick={() => (isDir ? toggle(entry.path) : onOpen(entry.path))}
          >
            <span className="w-3 shrink-0 text-muted" aria-hidden>
              {isDir ? (open ? "▾" : "▸") : ""}
            </span>
            <span
              className={`truncate ${marker ? MARKER_STYLE[marker] : isDir && dirMarkers.has(entry.path) ? "text-warn/80" : ""}`}
            >
              {entry.name}
            </span>
            {marker ? (
              <span className={`ml-auto shrink-0 pl-2 ${MARKER_STYLE[marker]}`} title={`git: ${marker}`}>
                {marker}
              </span>
            ) : null}
          </button>
        );
      })}
    </div>
  );
}
