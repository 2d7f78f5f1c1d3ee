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
    <div className="flex h-8 shrink-0 items-stretch border-b border-border text-xs">
      {/* Only tabs inside the tablist: Delete closes the focused tab, F2 renames it; the × is for the mouse. */}
      <div
        className="flex min-w-0 items-stretch overflow-x-auto"
        role="tablist"
        aria-label="Terminals"
        data-testid="terminal-tabs"
      >
        {terminals.map((terminal) => {
          const active = terminal.terminalId === activeId;
          const rename = () => {
            if (readOnly) return;
            setDraft(terminal.title);
            setEditing(terminal.terminalId);
          };
          return (
            <div
              key={terminal.terminalId}
              data-testid="terminal-tab"
              data-terminal-id={terminal.terminalId}
              className={`group flex items-center gap-1 border-r border-border px-2 ${active ? "bg-bg text-fg" : "text-muted hover:text-fg"}`}
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
                <button
                  type="button"
                  role="tab"
                  aria-selected={active}
                  className="max-w-40 truncate"
                  title="Double-click or F2 to rename, Delete to close"
                  data-testid="terminal-tab-title"
                  onClick={() => onSelect(terminal.terminalId)}
                  onDoubleClick={rename}
                  onKeyDown={(event) => {
                    if (event.key === "F2") rename();
                    if (event.key === "Delete" && !readOnly) onClose(terminal.terminalId);
                  }}
                >
                  {terminal.title}
                </button>
              )}
              {readOnly ? null : (
                <button
                  type="button"
                  aria-hidden
                  tabIndex={-1}
                  title={`Close ${terminal.title}`}
                  data-testid="terminal-tab-close"
                  className="rounded px-1 text-muted hover:bg-raised hover:text-fg"
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
      </div>
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
