import type { Socket } from "socket.io";
import type * as z from "zod";
import type { Ack } from "../../protocol";
import { toWireError } from "../errors";
import { assertWellFormed } from "../unicode";
import { credentialOf } from "./credentials";

/** Commands remembered for replay detection; far more than a tab can buffer while offline. */
const COMMAND_CACHE_SIZE = 2_000;

/**
 * Results of commands by `commandId`, per credential: a command re-sent after a reconnect (socket.io
 * buffers emits made while disconnected) gets the first result instead of acting twice. The key
 * holds who sent it (a person, a share link, the launch token), so one person's id never answers
 * another's command with the first one's result; a reconnect keeps its credential, so replay still works.
 */
export class CommandCache {
  private readonly results = new Map<string, Promise<Ack>>();

  run(sender: string, commandId: string | undefined, action: () => Promise<Ack>): Promise<Ack> {
    if (!commandId) return action();
    const key = `${sender}\u0000${commandId}`;
    const existing = this.results.get(key);
    if (existing) return existing;
    const result = action();
    this.results.set(key, result);
    if (this.results.size > COMMAND_CACHE_SIZE) this.results.delete(this.results.keys().next().value as string);
    return result;
  }
}

/**
 * Registers a validated socket command: the payload is parsed with its protocol
 * schema, errors become `{ok:false, error}` acks, and nothing thrown escapes to
 * socket.io (one bad payload never takes the bridge down).
 */
export function onCommand<S extends z.ZodType>(
  socket: Socket,
  name: string,
  schema: S,
  handler: (payload: z.infer<S>) => Promise<unknown>,
  commands?: CommandCache,
): void {
  socket.on(name, (raw: unknown, maybeAck?: unknown) => {
    const ack =
      typeof maybeAck === "function"
        ? (maybeAck as (response: Ack) => void)
        : typeof raw === "function"
          ? (raw as (response: Ack) => void)
          : undefined;
    const execute = async (): Promise<Ack> => {
      try {
        const input = typeof raw === "function" ? undefined : raw;
        assertWellFormed(input);
        const payload = schema.parse(input);
        return { ok: true, data: (await handler(payload)) ?? null };
      } catch (error) {
        return { ok: false, error: toWireError(error).error };
      }
    };
    const commandId = isRecord(raw) && typeof raw.commandId === "string" ? raw.commandId : undefined;
    void (commands ? commands.run(senderOf(socket), commandId, execute) : execute()).then((response) =>
      ack?.(response),
    );
  });
}

/** Who sent a command, for the command cache: the credential's holder (a socket without one is only itself). */
function senderOf(socket: Socket): string {
  const credential = credentialOf(socket);
  switch (credential?.kind) {
    case "api_token":
    case "sign_in":
      return `person:${credential.personId}`;
    case "share":
      return `share:${credential.linkId}`;
    case "named":
      return `token:${credential.name}`;
    case "launch":
      return "launch";
    default:
      return `socket:${socket.id}`;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
