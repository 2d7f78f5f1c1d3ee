"use client";

import { useState } from "react";
import type { TerminalInfo } from "@/server/protocol";

interface TerminalTabsProps {
  terminals: TerminalInfo[];
  activeId: string | null;
  onSelect(terminalId: string): void;
  onCreate(): void;
  onClose(terminalId: string): void;
  onRename(terminalId: string, title: string): void;
  /** A view-only page: the tabs only switch between terminals. */
  readOnly?: boolean;
}

/** One tab per terminal; double-click a title to rename it. */
export function TerminalTabs({
  terminals,
  activeId,
  onSelect,
  onCreate,
  onClose,
  onRename,
  readOnly = false,
}: TerminalTabsProps) {
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState("");

  const commit = (terminalId: string) => {
    const title = draft.trim();
    setEditing(null);
    if (title) onRename(terminalId, title.slice(0, 80));
  };

  return (
    <div
      className="flex h-8 shrink-0 items-stretch overflow-x-auto border-b border-border text-xs"
      role="tablist"
      data-testid="terminal-tabs"
    >
      {terminals.map((terminal) => {
        const active = terminal.terminalId === activeId;
        return (
          <div
            key={terminal.terminalId}
            role="tab"
            aria-selected={active}
            data-testid="terminal-tab"
            data-terminal-id={terminal.terminalId}
            className={`group flex items-center gap-1 border-r border-border px-2 ${active ? "bg-bg text-fg" : "text-muted hover:text-fg"}`}
            onClick={() => onSelect(terminal.terminalId)}
          >
            {editing === terminal.terminalId ? (
              <input
                autoFocus
                value={draft}
                aria-label="Terminal name"
                data-testid="terminal-rename-input"
                className="w-28 bg-transparent outline-none"
                onChange={(event) => setDraft(event.target.value)}
                onBlur={() => commit(terminal.terminalId)}
                onKeyDown={(event) => {
                  if (event.key === "Enter") commit(terminal.terminalId);
                  if (event.key === "Escape") setEditing(null);
                }}
              />
            ) : (
              <span
                className="max-w-40 truncate"
                title="Double-click to rename"
                data-testid="terminal-tab-title"
                onDoubleClick={() => {
                  if (readOnly) return;
                  setDraft(terminal.title);
                  setEditing(terminal.terminalId);
                }}
              >
                {terminal.title}
              </span>
            )}
            {readOnly ? null : (
              <button
                type="button"
                aria-label={`Close ${terminal.title}`}
                data-testid="terminal-tab-close"
                className="rounded px-1 text-muted opacity-60 hover:bg-raised hover:text-fg group-hover:opacity-100"
                onClick={(event) => {
                  event.stopPropagation();
                  onClose(terminal.terminalId);
                }}
              >
                ×
              </button>
            )}
          </div>
        );
      })}
      {readOnly ? (
        <span className="ml-auto self-center px-3 text-muted" data-testid="terminal-read-only">
          read-only
        </span>
      ) : (
        <button
          type="button"
          aria-label="New terminal"
          title="New terminal"
          data-testid="terminal-new"
          className="px-3 text-muted hover:text-fg"
          onClick={onCreate}
        >
          +
        </button>
      )}
    </div>
  );
}
