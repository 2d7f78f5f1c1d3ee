import type { BridgeOptions } from "./options";
import { closeStorage, openParts, stopParts, type Parts } from "./parts";

/** What print mode drives a turn with. */
export type HeadlessServices = Pick<Parts, "config" | "sessions" | "runtime" | "turns" | "log" | "approvals" | "mcp">;

export interface Headless {
  services: HeadlessServices;
  close(): Promise<void>;
}

/**
 * The bridge's domain parts without its HTTP server, sockets, previews or push: `worldline run`
 * drives one turn and exits, and nobody connects to it. Loading none of those (socket.io,
 * web-push, the preview proxy, the transport's routes) is most of what print mode saves at start.
 */
export async function startHeadless(options: Omit<BridgeOptions, "ui" | "dev" | "push">): Promise<Headless> {
  const parts = await openParts(options);
  let closing: Promise<void> | undefined;
  return {
    services: parts,
    close: () =>
      (closing ??= (async () => {
        await stopParts(parts);
        await closeStorage(parts);
      })()),
  };
}
