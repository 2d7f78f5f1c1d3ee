import * as z from "zod";
import type { RedisLink } from "../bus";

/** What a bridge announces when a terminal's entry in the registry changes (opened, closed). */
const OwnerChange = z.object({ sessionId: z.string().min(1), terminalId: z.string().min(1) });
type OwnerChange = z.infer<typeof OwnerChange>;

/**
 * Which bridge runs each terminal another bridge's tabs type into, remembered, so a keystroke to
 * a terminal elsewhere costs one Redis publish instead of a registry read and a lease query (two
 * database round trips) before it. The registry (a Redis hash per session, terminals.ts) stays the
 * truth: a bridge that opens or closes a terminal announces it on `<prefix>:pty:owners`, and every
 * bridge drops what it remembered of that terminal. A lookup that raced an announcement is not
 * remembered (see `since`), so a stale owner cannot outlive the message that dropped it.
 * Calls that must know the owner is alive (attach, close, rename) still ask the registry and the
 * leases, and refresh what is remembered.
 */
export class TerminalOwners {
  private readonly owners = new Map<string, string>();
  /** Announcements heard so far: a lookup started at one count is remembered only if it still holds. */
  private heard = 0;
  private readonly channel: string;

  constructor(private readonly link: RedisLink) {
    this.channel = `${link.prefix}:pty:owners`;
    link.sub.on("message", (channel: string, raw: string) => {
      if (channel !== this.channel) return;
      const change = parseChange(raw);
      this.heard++;
      if (change) this.owners.delete(keyOf(change));
      else this.owners.clear(); // a message we cannot read could have named any terminal
    });
  }

  /** Subscribes before any lookup is remembered, so no announcement is missed. */
  async start(): Promise<void> {
    await this.link.sub.subscribe(this.channel);
  }

  /** The owner remembered for a terminal, if any. */
  cached(sessionId: string, terminalId: string): string | undefined {
    return this.owners.get(keyOf({ sessionId, terminalId }));
  }

  /** The count to pass to `remember` for a lookup starting now. */
  since(): number {
    return this.heard;
  }

  /** Remembers what a lookup started at `since` found, unless an announcement came in meanwhile. */
  remember(sessionId: string, terminalId: string, owner: string, since: number): void {
    if (since === this.heard) this.owners.set(keyOf({ sessionId, terminalId }), owner);
  }

  forget(sessionId: string, terminalId: string): void {
    this.owners.delete(keyOf({ sessionId, terminalId }));
  }

  /** Tells every bridge (this one too) that the terminal's registry entry changed; sent after the change. */
  announce(change: OwnerChange): Promise<unknown> {
    return this.link.pub.publish(this.channel, JSON.stringify(change));
  }

  /** Terminals remembered (tests watch it). */
  get size(): number {
    return this.owners.size;
  }
}

const keyOf = (change: OwnerChange) => `${change.sessionId}\n${change.terminalId}`;

function parseChange(raw: string): OwnerChange | undefined {
  try {
    return OwnerChange.parse(JSON.parse(raw));
  } catch {
    // answered by the caller: an unreadable announcement drops everything remembered
    return undefined;
  }
}
