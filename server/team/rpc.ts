import { randomUUID } from "node:crypto";
import { ZodError } from "zod";
import type { RedisLink } from "../bus";
import { errorMessage, WorldlineError } from "../errors";
import type { WireError } from "../protocol";
import * as store from "../store";
import {
  TeamMessage,
  TeamMethods,
  TeamReplies,
  type TeamArgs,
  type TeamCall,
  type TeamInput,
  type TeamMethod,
  type TeamReply,
} from "./messages";

/** A forwarded call unanswered this long fails: the owner is gone or stuck (its lease will tell). */
const CALL_TIMEOUT_MS = 15_000;

type Handler = (args: unknown, from: string) => Promise<unknown> | unknown;
type Message = TeamMessage;

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
    { resolve(value: unknown): void; reject(error: Error): void; timer: NodeJS.Timeout; method: TeamCall }
  >();

  constructor(
    private readonly link: RedisLink,
    private readonly me: string,
  ) {
    link.sub.on("message", (channel: string, raw: string) => {
      if (channel !== this.channelOf(me)) return;
      const message = parseMessage(raw);
      if (message) void this.receive(message);
    });
  }

  async start(): Promise<void> {
    await this.link.sub.subscribe(this.channelOf(this.me));
  }

  /** Handles a method; its arguments are checked against their schema (server/team/messages.ts) first. */
  handle<M extends TeamMethod>(
    method: M,
    handler: (args: TeamArgs<M>, from: string) => Promise<unknown> | unknown,
  ): void {
    this.handlers.set(method, (args, from) => handler(TeamMethods[method].parse(args) as TeamArgs<M>, from));
  }

  /** Calls a method on another bridge; its answer is parsed with the method's reply schema (TeamReplies). */
  call<M extends TeamCall>(owner: string, method: M, args: TeamInput<M>): Promise<TeamReply<M>> {
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
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new WorldlineError("team:unreachable", `The bridge running this (${owner}) did not answer.`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer, method });
      this.publish(owner, { kind: "call", id, from: this.me, method, args });
    }).then((value) => parseReply(method, value));
  }

  send<M extends TeamMethod>(owner: string, method: M, args: TeamInput<M>): void {
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
      if (message.error) waiting.reject(WorldlineError.fromWire(message.error));
      else waiting.resolve(message.value);
      return;
    }
    const handler = this.handlers.get(message.method ?? "");
    let reply: Message = { kind: "reply", id: message.id, from: this.me };
    try {
      if (!handler) throw new WorldlineError("team:unreachable", `No handler for ${message.method}.`);
      reply = { ...reply, value: (await handler(message.args ?? {}, message.from)) ?? null };
    } catch (error) {
      const failure = toTeamError(message.method, error);
      reply = { ...reply, error: failure };
      if (message.kind === "send") console.error(`[worldline] forwarded ${message.method} failed:`, failure.message);
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

/**
 * A handler's error as the caller should see it: its code, message and details, so the bridge that
 * forwarded the call answers as this one would (a 429 keeps its Retry-After, a database this bridge
 * cannot reach is a 503 `store:unavailable`, not an unknown failure).
 */
function toTeamError(method: string | undefined, error: unknown): WireError {
  if (error instanceof ZodError) return { code: "team:invalid", message: `${method}: ${describeIssues(error)}` };
  const fault = error instanceof WorldlineError ? null : store.storeFault(error);
  const known = fault ? store.faultError(fault, error) : error;
  if (known instanceof WorldlineError)
    return {
      code: known.code,
      message: known.message,
      ...(known.details !== undefined ? { details: known.details } : {}),
    };
  return { code: "team:failed", message: errorMessage(error) };
}

/** A reply's value as its method's schema reads it; one of another shape is a `team:invalid` error. */
function parseReply<M extends TeamCall>(method: M, value: unknown): TeamReply<M> {
  const parsed = TeamReplies[method].safeParse(value);
  if (parsed.success) return parsed.data as TeamReply<M>;
  throw new WorldlineError(
    "team:invalid",
    `The answer to ${method} from another bridge: ${describeIssues(parsed.error)}`,
  );
}

/** A message off the wire, or null (logged) when it is not one: JSON that does not fit the envelope. */
function parseMessage(raw: string): Message | null {
  try {
    return TeamMessage.parse(JSON.parse(raw));
  } catch (error) {
    const why =
      error instanceof ZodError ? describeIssues(error) : error instanceof Error ? error.message : String(error);
    console.error(`[worldline] ignored a malformed message from another bridge: ${why}`);
    return null;
  }
}

function describeIssues(error: ZodError): string {
  return error.issues.map((issue) => `${issue.path.join(".") || "message"}: ${issue.message}`).join("; ");
}
