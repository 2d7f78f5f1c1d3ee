"use client";

import { useMemo, useRef, useState, type KeyboardEvent } from "react";
import type { GitMarker, GitStatus, TreeEntry } from "@/server/protocol";

const MARKER_STYLE: Record<GitMarker, string> = {
  M: "text-warn",
  A: "text-ok",
  U: "text-ok",
  D: "text-danger",
  R: "text-accent",
  C: "text-danger",
};

/** What a screen reader says for a marker letter. */
const MARKER_NAME: Record<GitMarker, string> = {
  M: "modified",
  A: "added",
  U: "untracked",
  D: "deleted",
  R: "renamed",
  C: "conflicted",
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

  // One tab stop for the whole tree (the focused or open row); arrows move within it, as in an editor's explorer.
  const [focusPath, setFocusPath] = useState<string | null>(null);
  const tabStop = rows.some((row) => row.entry.path === focusPath)
    ? focusPath
    : rows.some((row) => row.entry.path === activePath)
      ? activePath
      : (rows[0]?.entry.path ?? null);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const buttons = [...(list.current?.querySelectorAll<HTMLButtonElement>("[data-tree-row]") ?? [])];
    const index = buttons.indexOf(document.activeElement as HTMLButtonElement);
    const row = rows[index];
    const move = (to: number) => {
      event.preventDefault();
      buttons[Math.max(0, Math.min(buttons.length - 1, to))]?.focus();
    };
    if (event.key === "ArrowDown") move(index + 1);
    else if (event.key === "ArrowUp") move(index - 1);
    else if (event.key === "Home") move(0);
    else if (event.key === "End") move(buttons.length - 1);
    else if (event.key === "ArrowRight" && row?.entry.type === "dir") {
      event.preventDefault();
      if (!expanded.has(row.entry.path)) toggle(row.entry.path);
      else move(index + 1);
    } else if (event.key === "ArrowLeft" && row) {
      event.preventDefault();
      if (row.entry.type === "dir" && expanded.has(row.entry.path)) toggle(row.entry.path);
      else {
        // To the parent folder's row.
        const parent = row.entry.path.includes("/") ? row.entry.path.slice(0, row.entry.path.lastIndexOf("/")) : null;
        const at = rows.findIndex((candidate) => candidate.entry.path === parent);
        if (at >= 0) move(at);
      }
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
  if (rows.length === 0)
    return (
      <div className="px-3 py-2 font-mono text-xs text-muted" tabIndex={-1} data-testid="file-tree">
        This folder is empty.
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
      onFocus={(event) => {
        const path = (event.target as HTMLElement).dataset.path;
        if (path) setFocusPath(path);
      }}
    >
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
            aria-level={depth + 1}
            tabIndex={entry.path === tabStop ? 0 : -1}
            data-tree-row
            data-ignored={entry.ignored ? "true" : undefined}
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
              className={`truncate ${marker ? MARKER_STYLE[marker] : isDir && dirMarkers.has(entry.path) ? "text-warn" : entry.ignored ? "italic text-muted" : ""}`}
            >
              {entry.name}
            </span>
            {entry.ignored ? <span className="sr-only">, ignored by git</span> : null}
            {marker ? (
              <span className={`ml-auto shrink-0 pl-2 ${MARKER_STYLE[marker]}`} title={`git: ${MARKER_NAME[marker]}`}>
                <span aria-hidden>{marker}</span>
                <span className="sr-only">, {MARKER_NAME[marker]}</span>
              </span>
            ) : null}
          </button>
        );
      })}
    </div>
  );
}
