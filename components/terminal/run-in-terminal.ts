"use client";

import { command } from "@/components/transport/client";

/**
 * The chat's shell mode: runs `line` in the session's active terminal (the one used
 * last), opening a terminal when the session has none. Resolves with its id.
 */
export async function runInTerminal(sessionId: string, line: string): Promise<{ terminalId: string }> {
  return command("pty.run", { sessionId, line });
}
