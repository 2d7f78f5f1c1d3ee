"use client";

import { useCallback, useEffect, useState } from "react";
import type { TerminalInfo } from "@/server/protocol";
import { command, getSocket, onMessage } from "@/components/transport/client";
import { canDrive, useAccess } from "@/components/shared/use-access";
import { TerminalTabs } from "./terminal-tabs";
import { TerminalView } from "./terminal-view";

/** See the auto-start below. */
const AUTO_START_DEDUPE_MS = 5_000;
const autoStarts = new Map<string, number>();

/**
 * The session's terminals: a tab per terminal (new, rename, close) and the active one
 * below. Every tab of the browser that shows the session sees the same terminals. Opening
 * the panel on a session without terminals starts one (closing the last one later does not).
 * A view-only link watches them read-only: no typing, no new, renamed or closed terminals.
 */
export function TerminalPanel({ sessionId }: { sessionId: string }) {
  const [terminals, setTerminals] = useState<TerminalInfo[] | null>(null);
  const [activeId, setActiveId] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const access = useAccess(sessionId);
  const readOnly = !canDrive(access);

  useEffect(() => {
    const socket = getSocket();
    const load = () =>
      command("pty.list", { sessionId }).then(
        (result) => setTerminals(result.terminals),
        (err: Error) => setError(err.message),
      );
    const offTerminals = onMessage("pty.terminals", (message) => {
      if (message.sessionId === sessionId) setTerminals(message.terminals);
    });
    // A reconnect loses the bridge's room membership; listing again restores it.
    socket.on("connect", load);
    if (socket.connected) void load();
    return () => {
      offTerminals();
      socket.off("connect", load);
    };
  }, [sessionId]);

  // Keep a valid selection: the chosen terminal while it exists, else the newest.
  useEffect(() => {
    if (!terminals) return;
    if (activeId && terminals.some((terminal) => terminal.terminalId === activeId)) return;
    setActiveId(terminals.at(-1)?.terminalId ?? null);
  }, [terminals, activeId]);

  const create = useCallback(
    async (quiet = false) => {
      setError(null);
      try {
        const info = await command("pty.create", { sessionId });
        setTerminals((current) =>
          current?.some((t) => t.terminalId === info.terminalId) ? current : [...(current ?? []), info],
        );
        setActiveId(info.terminalId);
      } catch (err) {
        // A quiet start that fails (a view-only link) leaves the "Open a terminal" button, no error.
        if (!quiet) setError((err as Error).message);
      }
    },
    [sessionId],
  );

  // What the panel found when it first listed (state, not a ref: the page and tests read it from the DOM).
  const [opened, setOpened] = useState<"loading" | "empty" | "populated">("loading");
  useEffect(() => {
    // Started only once the page's access is known, and only for a page that may drive the session.
    if (!terminals || opened !== "loading" || access === null) return;
    setOpened(terminals.length === 0 ? "empty" : "populated");
    if (terminals.length > 0 || readOnly) return;
    // A panel closed and reopened at once (the layout arriving from the server can do that)
    // may list before the first start landed: one start per session per moment, not two.
    const last = autoStarts.get(sessionId) ?? 0;
    if (Date.now() - last < AUTO_START_DEDUPE_MS) return;
    autoStarts.set(sessionId, Date.now());
    // The first list may predate a terminal started meanwhile (shell mode, another tab): ask again right
    // before starting one.
    command("pty.list", { sessionId }).then(
      (result) => (result.terminals.length === 0 ? create(true) : setTerminals(result.terminals)),
      () => create(true),
    );
  }, [terminals, create, sessionId, opened, access, readOnly]);

  const close = useCallback(
    (terminalId: string) => {
      command("pty.close", { sessionId, terminalId }).catch((err: Error) => setError(err.message));
    },
    [sessionId],
  );

  const rename = useCallback(
    (terminalId: string, title: string) => {
      command("pty.rename", { sessionId, terminalId, title }).catch((err: Error) => setError(err.message));
    },
    [sessionId],
  );

  return (
    <div className="flex h-full min-h-0 flex-col bg-panel" data-testid="terminal-panel" data-opened={opened}>
      <TerminalTabs
        terminals={terminals ?? []}
        activeId={activeId}
        onSelect={setActiveId}
        onCreate={() => void create()}
        onClose={close}
        onRename={rename}
        readOnly={readOnly}
      />
      {error ? (
        <div
          className="border-b border-border bg-danger/10 px-3 py-0.5 text-xs text-danger"
          data-testid="terminal-error"
        >
          {error}
        </div>
      ) : null}
      <div className="min-h-0 flex-1">
        {/* Once the access is known: a terminal drawn read-only, then again writable, would attach twice. */}
        {activeId && access ? (
          <TerminalView key={activeId} sessionId={sessionId} terminalId={activeId} readOnly={readOnly} />
        ) : terminals && readOnly ? (
          <div className="flex h-full items-center justify-center text-sm text-muted" data-testid="terminal-none">
            No terminals in this session.
          </div>
        ) : terminals ? (
          <div className="flex h-full items-center justify-center text-sm text-muted">
            <button
              type="button"
              className="rounded border border-border px-3 py-1 hover:bg-raised"
              onClick={() => void create()}
              data-testid="terminal-empty-new"
            >
              Open a terminal
            </button>
          </div>
        ) : null}
      </div>
    </div>
  );
}
