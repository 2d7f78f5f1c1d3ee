"use client";

import type { SearchAddon } from "@xterm/addon-search";
import { useEffect, useRef, useState } from "react";

/** Find in scrollback: Enter for next, Shift+Enter for previous, Escape to close. */
export function TerminalSearch({ search, onClose }: { search: SearchAddon; onClose: () => void }) {
  const [query, setQuery] = useState("");
  const inputRef = useRef<HTMLInputElement>(null);
  const options = {
    caseSensitive: false,
    decorations: {
      matchOverviewRuler: "#888",
      activeMatchColorOverviewRuler: "#fc6",
      activeMatchBackground: "#a87a00",
    },
  };

  useEffect(() => inputRef.current?.focus(), []);
  useEffect(() => () => search.clearDecorations(), [search]);

  return (
    <div
      className="absolute right-3 top-1 z-10 flex items-center gap-1 rounded border border-border bg-raised px-1 py-0.5 text-xs shadow"
      data-testid="terminal-search"
    >
      <input
        ref={inputRef}
        value={query}
        placeholder="Find"
        aria-label="Find in terminal"
        data-testid="terminal-search-input"
        className="w-40 bg-transparent px-1 outline-none"
        onChange={(event) => {
          setQuery(event.target.value);
          search.findNext(event.target.value, { ...options, incremental: true });
        }}
        onKeyDown={(event) => {
          if (event.key === "Escape") onClose();
          if (event.key !== "Enter") return;
          if (event.shiftKey) search.findPrevious(query, options);
          else search.findNext(query, options);
        }}
      />
      <button
        type="button"
        className="px-1 text-muted hover:text-fg"
        aria-label="Previous match"
        onClick={() => search.findPrevious(query, options)}
      >
        ↑
      </button>
      <button
        type="button"
        className="px-1 text-muted hover:text-fg"
        aria-label="Next match"
        onClick={() => search.findNext(query, options)}
      >
        ↓
      </button>
      <button type="button" className="px-1 text-muted hover:text-fg" aria-label="Close search" onClick={onClose}>
        ×
      </button>
    </div>
  );
}
