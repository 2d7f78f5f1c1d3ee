import { randomUUID } from "node:crypto";
import type { RedisLink } from "../bus";
import { WorldlineError } from "../errors";

/** A forwarded call unanswered this long fails: the owner is gone or stuck (its lease will tell). */
const CALL_TIMEOUT_MS = 15_000;

type Handler = (args: Record<string, unknown>, from: string) => Promise<unknown> | unknown;

interface Message {
  kind: "call" | "reply" | "send";
  id?: string;
  from: string;
  method?: string;
  args?: Record<string, unknown>;
  value?: unknown;
  error?: { code: string; message: string };
}

/**
 * Calls between bridges of one deployment, addressed by owner id (server/leases): each bridge
 * listens on `<prefix>:to:<its owner id>`. `call` waits for the answer, `send` does not (terminal
 * input, output and acks, where order matters and an answer would only add a round trip).
 * Redis pub/sub keeps the order of messages from one connection to one subscriber.
 */
export class Rpc {
  private readonly handlers = new Map<string, Handler>();
  private readonly pending = new Map<
    string,
    { resolve(value: unknown): void; reject(error: Error): void; timer: NodeJS.Timeout }
  >();

  constructor(
    private readonly link: RedisLink,
    private readonly me: string,
  ) {
    link.sub.on("message", (channel: string, raw: string) => {
      if (channel === this.channelOf(me)) void this.receive(JSON.parse(raw) as Message);
    });
  }

  async start(): Promise<void> {
    await this.link.sub.subscribe(this.channelOf(this.me));
  }

  handle(method: string, handler: Handler): void {
    this.handlers.set(method, handler);
  }

  call<T>(owner: string, method: string, args: Record<string, unknown>): Promise<T> {
    // Redis is down: the other bridge cannot be reached now; say so at once instead of after CALL_TIMEOUT_MS.
    if (!this.link.available()) {
      return Promise.reject(
        new WorldlineError(
          "bus:unavailable",
          "Redis is unreachable, so the bridge running this session cannot be reached; try again shortly.",
        ),
      );
    }
    const id = randomUUID();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new WorldlineError("team:unreachable", `The bridge running this (${owner}) did not answer.`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      this.publish(owner, { kind: "call", id, from: this.me, method, args });
    });
  }

  send(owner: string, method: string, args: Record<string, unknown>): void {
    this.publish(owner, { kind: "send", from: this.me, method, args });
  }

  close(): void {
    for (const { timer, reject } of this.pending.values()) {
      clearTimeout(timer);
      reject(new WorldlineError("team:unreachable", "This bridge is shutting down."));
    }
    this.pending.clear();
  }

  private async receive(message: Message): Promise<void> {
    if (message.kind === "reply") {
      const waiting = this.pending.get(message.id ?? "");
      if (!waiting) return;
      this.pending.delete(message.id ?? "");
      clearTimeout(waiting.timer);
      if (message.error)
        waiting.reject(new WorldlineError(message.error.code as `${string}:${string}`, message.error.message));
      else waiting.resolve(message.value);
      return;
    }
    const handler = this.handlers.get(message.method ?? "");
    let reply: Message = { kind: "reply", id: message.id, from: this.me };
    try {
      if (!handler) throw new WorldlineError("team:unreachable", `No handler for ${message.method}.`);
      reply = { ...reply, value: (await handler(message.args ?? {}, message.from)) ?? null };
    } catch (error) {
      const code = error instanceof WorldlineError ? error.code : "team:failed";
      const text = error instanceof Error ? error.message : String(error);
      reply = { ...reply, error: { code, message: text } };
      if (message.kind === "send") console.error(`[worldline] forwarded ${message.method} failed:`, text);
    }
    if (message.kind === "call") this.publish(message.from, reply);
  }

  private publish(owner: string, message: Message): void {
    this.link.pub.publish(this.channelOf(owner), JSON.stringify(message)).catch((error: unknown) => {
      console.error("[worldline] forwarding to another bridge failed:", error instanceof Error ? error.message : error);
    });
  }

  private channelOf(owner: string): string {
    return `${this.link.prefix}:to:${owner}`;
  }
}
