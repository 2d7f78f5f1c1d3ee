"use client";

import "@xterm/xterm/css/xterm.css";
import type { Terminal as Xterm } from "@xterm/xterm";
import type { SearchAddon } from "@xterm/addon-search";
import { useEffect, useId, useRef, useState } from "react";
import { PTY_ACK_EVERY_BYTES, PtyDataArgs } from "@/server/protocol";
import { command, getSocket, onMessage, send } from "@/components/transport/client";

import { isTerminalToggle, LEAVE_TERMINAL_HINT } from "./terminal-keys";
import { TerminalSearch } from "./terminal-search";
import { xtermTheme } from "./theme";

type Status = "connecting" | "live" | "resync" | "exited" | "error";

declare global {
  interface Window {
    /** Test hook: the text of a terminal's buffer (the WebGL renderer keeps it out of the DOM). */
    worldlineTerminalText?: (terminalId: string) => string | null;
  }
}
const openTerminals = new Map<string, Xterm>();

/**
 * One terminal in the page: an xterm that shows the bridge's snapshot, then live
 * binary output (acknowledged from xterm's write callback for flow control), sends
 * keystrokes and follows the panel's size. `readOnly` (a view-only link): output only, no input
 * and no resize (the shell keeps the size of those who drive it).
 */
export function TerminalView({
  sessionId,
  terminalId,
  readOnly = false,
}: {
  sessionId: string;
  terminalId: string;
  readOnly?: boolean;
}) {
  const hostRef = useRef<HTMLDivElement>(null);
  const termRef = useRef<Xterm | null>(null);
  const searchRef = useRef<SearchAddon | null>(null);
  const [status, setStatus] = useState<Status>("connecting");
  const [searchOpen, setSearchOpen] = useState(false);
  const hintId = useId();

  useEffect(() => {
    let disposed = false;
    const cleanups: Array<() => void> = [];
    void (async () => {
      const [{ Terminal }, { FitAddon }, { SearchAddon }, { WebLinksAddon }] = await Promise.all([
        import("@xterm/xterm"),
        import("@xterm/addon-fit"),
        import("@xterm/addon-search"),
        import("@xterm/addon-web-links"),
      ]);
      const host = hostRef.current;
      if (disposed || !host) return;
      const term = new Terminal({
        fontFamily: 'ui-monospace, "JetBrains Mono", Menlo, Consolas, monospace',
        fontSize: 13,
        cursorBlink: !readOnly,
        disableStdin: readOnly,
        scrollback: 10_000,
        allowProposedApi: true,
        theme: xtermTheme(),
      });
      const fit = new FitAddon();
      const search = new SearchAddon();
      term.loadAddon(fit);
      term.loadAddon(search);
      term.loadAddon(new WebLinksAddon((_event, uri) => window.open(uri, "_blank", "noopener,noreferrer")));
      term.open(host);
      // xterm's own screenReaderMode stays off: it reads every byte of output through an assertive
      // live region (a build log would drown the page's polite announcements) and mirrors the screen
      // into the DOM on every write. The input says how to leave instead.
      term.textarea?.setAttribute("aria-describedby", hintId);
      await loadWebgl(term);
      if (disposed) return term.dispose();
      termRef.current = term;
      searchRef.current = search;
      openTerminals.set(terminalId, term);
      window.worldlineTerminalText = (id) => bufferText(openTerminals.get(id));
      safeFit(fit);

      term.attachCustomKeyEventHandler((event) => {
        if (event.type !== "keydown") return true;
        const key = event.key.toLowerCase();
        const mod = event.ctrlKey || event.metaKey;
        // Copy: Ctrl+Shift+C, or Ctrl+C while text is selected (otherwise Ctrl+C interrupts).
        if (mod && key === "c" && (event.shiftKey || term.hasSelection())) {
          void navigator.clipboard?.writeText(term.getSelection());
          term.clearSelection();
          return false;
        }
        // Paste: let the browser fire its paste event, which xterm turns into input (bracketed if asked).
        if (mod && key === "v") return false;
        if (mod && event.shiftKey && key === "f") {
          setSearchOpen(true);
          return false;
        }
        // Ctrl+` is the way out to the prompt (use-ide-shortcuts.ts): the terminal must not trap the keyboard.
        if (isTerminalToggle(event)) return false;
        return true;
      });

      const socket = getSocket();
      let parsed = 0;
      const onData = (...args: unknown[]) => {
        const message = PtyDataArgs.safeParse(args);
        if (!message.success || message.data[0] !== terminalId) return;
        const raw = message.data[1];
        const bytes = raw instanceof Uint8Array ? raw : new Uint8Array(raw);
        term.write(bytes, () => {
          parsed += bytes.length;
          if (parsed < PTY_ACK_EVERY_BYTES) return;
          send("pty.ack", { terminalId, bytes: parsed });
          parsed = 0;
        });
      };
      const offSnapshot = onMessage("pty.snapshot", (message) => {
        if (message.terminalId !== terminalId) return;
        term.reset();
        term.write(message.data);
        setStatus("live");
      });
      const offResync = onMessage("pty.resync", (message) => {
        if (message.terminalId === terminalId) setStatus("resync");
      });
      const offExit = onMessage("pty.exit", (message) => {
        if (message.terminalId !== terminalId) return;
        const code = message.exitCode;
        term.write(`\r\n\x1b[2m[process exited${code === null ? "" : ` with code ${code}`}]\x1b[0m\r\n`);
        setStatus("exited");
      });
      const attach = () => {
        parsed = 0;
        setStatus("connecting");
        // The status shows the failure; a reconnect attaches again.
        command("pty.attach", { sessionId, terminalId, cols: term.cols, rows: term.rows }).catch(() =>
          setStatus("error"),
        );
      };
      socket.on("pty.data", onData);
      // After a reconnect the bridge has forgotten this viewer: attach again for a fresh screen.
      socket.on("connect", attach);
      if (socket.connected) attach();

      const type = (data: string) => !readOnly && send("pty.input", { sessionId, terminalId, data });
      const input = term.onData(type);
      const binary = term.onBinary(type);
      const sendSize = (cols: number, rows: number) =>
        !readOnly && send("pty.resize", { sessionId, terminalId, cols, rows });
      const resize = term.onResize(({ cols, rows }) => sendSize(cols, rows));
      // Focusing a tab makes it the most recently active viewer, whose size the shell takes.
      const onFocus = () => sendSize(term.cols, term.rows);
      term.textarea?.addEventListener("focus", onFocus);
      let frame = 0;
      const observer = new ResizeObserver(() => {
        cancelAnimationFrame(frame);
        frame = requestAnimationFrame(() => safeFit(fit));
      });
      observer.observe(host);
      if (!readOnly && !typingElsewhere(host)) term.focus();

      cleanups.push(() => {
        observer.disconnect();
        cancelAnimationFrame(frame);
        term.textarea?.removeEventListener("focus", onFocus);
        input.dispose();
        binary.dispose();
        resize.dispose();
        socket.off("pty.data", onData);
        offSnapshot();
        offResync();
        offExit();
        socket.off("connect", attach);
        send("pty.detach", { terminalId });
        openTerminals.delete(terminalId);
        termRef.current = null;
        searchRef.current = null;
        term.dispose();
      });
    })();
    return () => {
      disposed = true;
      for (const cleanup of cleanups) cleanup();
    };
  }, [sessionId, terminalId, readOnly, hintId]);

  return (
    <div
      className="relative flex h-full min-h-0 flex-col"
      data-testid="terminal-view"
      data-terminal-id={terminalId}
      data-status={status}
      data-read-only={readOnly}
    >
      {status === "resync" ? (
        <div
          className="absolute right-2 top-1 z-10 rounded bg-warn/20 px-2 text-xs text-warn"
          data-testid="terminal-resync"
        >
          catching up…
        </div>
      ) : null}
      {searchOpen && searchRef.current ? (
        <TerminalSearch
          search={searchRef.current}
          onClose={() => {
            setSearchOpen(false);
            termRef.current?.focus();
          }}
        />
      ) : null}
      <p id={hintId} className="sr-only" data-testid="terminal-hint">
        {LEAVE_TERMINAL_HINT}
      </p>
      <div ref={hostRef} className="min-h-0 flex-1 px-1 pt-1" data-testid="terminal-host" />
    </div>
  );
}

/** WebGL draws much faster; without a GPU (or on context loss) xterm's DOM renderer stays. */
async function loadWebgl(term: Xterm): Promise<void> {
  try {
    const { WebglAddon } = await import("@xterm/addon-webgl");
    const webgl = new WebglAddon();
    webgl.onContextLoss(() => webgl.dispose());
    term.loadAddon(webgl);
  } catch {
    // No WebGL2 here: the DOM renderer is already active.
  }
}

function safeFit(fit: { fit(): void }): void {
  try {
    fit.fit();
  } catch {
    // A hidden panel has no size to fit to; the next resize fits it.
  }
}

function bufferText(term: Xterm | undefined): string | null {
  if (!term) return null;
  const buffer = term.buffer.active;
  const lines: string[] = [];
  for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y)?.translateToString(true) ?? "");
  return lines.join("\n");
}

/**
 * Whether the terminal should leave the keyboard where it is. A terminal that appears while someone types
 * elsewhere (a terminal started from the prompt) must not take it: the rest of a prompt, and its Enter, would
 * go to the shell. Nor one that appears with the page (the panel restored open; the keyboard is on no control
 * yet): a keyboard user would start inside a terminal, which keeps Tab for the shell.
 */
function typingElsewhere(host: HTMLElement): boolean {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || host.contains(active)) return false;
  if (active === document.body) return true;
  return active instanceof HTMLTextAreaElement || active instanceof HTMLInputElement || active.isContentEditable;
}
