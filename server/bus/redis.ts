import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import * as z from "zod";
import type { LogBus, LogBusHooks } from "./types";

/**
 * Team mode (`REDIS_URL`): bridges on several hosts learn of each other's appends by pub/sub
 * instead of tailing the database. One channel per deployment (its key prefix) carries
 * `{sessionId, seq}` after each committed write; a bridge reads the rows of the sessions it
 * watches from the database (the log stays the truth, the message is only a wake-up).
 */
export class RedisBus implements LogBus {
  private readonly id = randomUUID();
  private readonly channel: string;

  constructor(
    private readonly pub: Redis,
    private readonly sub: Redis,
    prefix: string,
  ) {
    this.channel = `${prefix}:log`;
  }

  published(sessionId: string, seq: number): void {
    this.pub.publish(this.channel, JSON.stringify({ from: this.id, sessionId, seq })).catch(reportPublishError);
  }

  approvalsChanged(): void {
    this.pub.publish(this.channel, JSON.stringify({ from: this.id, approvals: true })).catch(reportPublishError);
  }

  start(hooks: LogBusHooks): void {
    this.sub.on("message", (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const parsed = parseBusMessage(message);
      if (!parsed || parsed.from === this.id) return;
      if ("approvals" in parsed) return void (hooks.watchingApprovals() && hooks.approvalsChanged());
      const { sessionId, seq } = parsed;
      const known = hooks.watching().get(sessionId);
      if (known === undefined) hooks.elsewhere?.(sessionId);
      else if (seq > known) hooks.ended(sessionId, seq);
    });
    // Messages sent while the connection was down are gone: re-read every watched log once back.
    this.sub.on("ready", () => {
      for (const [sessionId, known] of hooks.watching()) hooks.ended(sessionId, known + 1);
      if (hooks.watchingApprovals()) hooks.approvalsChanged();
    });
    void this.sub.subscribe(this.channel).catch(reportPublishError);
  }

  async close(): Promise<void> {
    await this.sub.unsubscribe(this.channel).catch(() => undefined); // closing: a dropped connection unsubscribed already
  }
}

/** One message on the deployment's channel: a session's log grew, or the approval queue changed. */
const BusMessage = z.union([
  z.object({ from: z.string(), sessionId: z.string().min(1), seq: z.number().int() }),
  z.object({ from: z.string(), approvals: z.literal(true) }),
]);
type BusMessage = z.infer<typeof BusMessage>;

/** A message off the channel, or null (logged) when it is not one: a bridge of another version, or garbage. */
function parseBusMessage(raw: string): BusMessage | null {
  try {
    return BusMessage.parse(JSON.parse(raw));
  } catch (error) {
    console.error("[worldline] redis bus: a message that is not one:", error instanceof Error ? error.message : error);
    return null;
  }
}

/** While Redis is down every publish fails; one line per this long is enough (redis-link.ts logs the outage itself). */
const PUBLISH_ERROR_LOG_MS = 10_000;
let lastPublishErrorAt = 0;

function reportPublishError(error: unknown): void {
  const now = Date.now();
  if (now - lastPublishErrorAt < PUBLISH_ERROR_LOG_MS) return; // said recently; the log stays the truth meanwhile
  lastPublishErrorAt = now;
  console.error("[worldline] redis bus:", error instanceof Error ? error.message : error);
}
