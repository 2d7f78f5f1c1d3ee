"use client";

/**
 * Where the terminals engineer's TerminalPanel goes (components/terminal/terminal-panel.tsx).
 * Until it lands, shell-mode lines are announced as a `worldline:run-in-terminal` window event.
 */
export function TerminalSlot({ sessionId }: { sessionId: string }) {
  return (
    <div className="flex h-full items-center justify-center text-muted" data-testid="terminal-slot" data-session={sessionId}>
      Terminals appear here.
    </div>
  );
}
