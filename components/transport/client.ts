"use client";

import { io, type Socket } from "socket.io-client";
import * as z from "zod";
import {
  Ack,
  commandReplies,
  serverMessages,
  socketCommands,
  type CommandReply,
  type ServerMessage,
  type ServerMessagePayload,
  type SocketCommand,
  type SocketCommandPayload,
} from "@/server/protocol";
import { emitFresh } from "./fresh-emit";

/**
 * The one way components reach the bridge: JSON over /api/v1, checked against the protocol's
 * schema of the answer; commands over socket.io, never through socket.io's offline buffer; and
 * the bridge's messages, each parsed with its schema. The HttpOnly cookie authenticates both;
 * state-changing HTTP calls also carry the CSRF header.
 */

/** A command that gets no answer in this time is reported as failed, not left hanging. */
const COMMAND_TIMEOUT_MS = 30_000;

export class BridgeError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

const CsrfAnswer = z.object({ csrf: z.string() });

let socket: Socket | null = null;
let csrf: Promise<string> | null = null;

export function getSocket(): Socket {
  socket ??= io({ transports: ["websocket"], withCredentials: true });
  return socket;
}

/** Calls the bridge's HTTP API; the answer is parsed with `schema` (an answer of another shape is an error). */
export async function api<S extends z.ZodType>(
  path: string,
  schema: S,
  init: { method?: string; body?: unknown } = {},
): Promise<z.infer<S>> {
  const method = init.method ?? "GET";
  const headers: Record<string, string> = {};
  if (method !== "GET") {
    headers["content-type"] = "application/json";
    headers["x-worldline-csrf"] = await csrfToken();
  }
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const error = data?.error ?? { code: "http:error", message: response.statusText };
    // Some errors carry their facts beside the message (a merge conflict's `paths`): those are the details then.
    const { code, message, details, ...facts } = error;
    throw new BridgeError(code, message, response.status, details ?? (Object.keys(facts).length ? facts : undefined));
  }
  const parsed = schema.safeParse(data);
  if (!parsed.success)
    throw new BridgeError(
      "protocol:unexpected_response",
      `The bridge answered ${method} ${path} in a shape this page does not know (a different version?): ${parsed.error.message}`,
      response.status,
    );
  return parsed.data;
}

type WithoutCommandId<T> = Omit<T, "commandId">;

/**
 * Sends a socket command and awaits its ack, parsed with the protocol's schemas (the answer's with
 * `commandReplies`). Commands that change state get a fresh commandId (so a replay can't act twice);
 * none goes through socket.io's offline buffer: a prompt, an approval or a keystroke from minutes
 * ago must not act on reconnect.
 */
export async function command<C extends SocketCommand>(
  name: C,
  payload: WithoutCommandId<SocketCommandPayload<C>>,
): Promise<CommandReply<C>> {
  const body = "commandId" in socketCommands[name].shape ? { commandId: crypto.randomUUID(), ...payload } : payload;
  const ack = unexpected(
    name,
    Ack.safeParse(await emitFresh(getSocket(), name, body, { timeoutMs: COMMAND_TIMEOUT_MS })),
  );
  if (!ack.ok) throw new BridgeError(ack.error.code, ack.error.message, undefined, ack.error.details);
  const reply: z.ZodType | undefined = (commandReplies as Partial<Record<SocketCommand, z.ZodType>>)[name];
  return (reply ? unexpected(name, reply.safeParse(ack.data)) : ack.data) as CommandReply<C>;
}

/** A parsed answer, or the error a bridge of another version gets: it answered in a shape this page does not know. */
function unexpected<T>(name: string, parsed: z.ZodSafeParseResult<T>): T {
  if (parsed.success) return parsed.data;
  throw new BridgeError(
    "protocol:unexpected_response",
    `The bridge answered "${name}" in a shape this page does not know (a different version?): ${parsed.error.message}`,
  );
}

/** Messages on the hot path (keystrokes, acks, resizes, leaving): no ack, and dropped while offline. */
export function send<
  C extends
    "pty.input" | "pty.ack" | "pty.resize" | "pty.detach" | "session.unsubscribe" | "files.unwatch" | "ports.unwatch",
>(name: C, payload: SocketCommandPayload<C>): void {
  const live = getSocket();
  if (live.connected) live.emit(name, payload);
}

/**
 * Listens to one of the bridge's messages, parsed with the protocol's schema; one that does not
 * parse is reported and dropped. Returns the function that stops listening.
 */
export function onMessage<M extends ServerMessage>(
  name: M,
  handler: (message: ServerMessagePayload<M>) => void,
): () => void {
  const live = getSocket();
  const listener = (raw: unknown) => {
    const parsed = serverMessages[name].safeParse(raw);
    if (parsed.success) handler(parsed.data as ServerMessagePayload<M>);
    else console.error(`[worldline] a "${name}" message does not match the protocol: ${parsed.error.message}`);
  };
  live.on(name as string, listener);
  return () => void live.off(name as string, listener);
}

function csrfToken(): Promise<string> {
  csrf ??= fetch("/api/v1/csrf", { credentials: "same-origin" })
    .then((response) => response.json())
    .then((body: unknown) => CsrfAnswer.parse(body).csrf)
    .catch((error: unknown) => {
      csrf = null;
      throw error;
    });
  return csrf;
}
