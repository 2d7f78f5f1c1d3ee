"use client";

import { io, type Socket } from "socket.io-client";
import type { Ack, ClientCommand, ClientCommandPayload } from "@/server/protocol";
import { emitFresh } from "./fresh-emit";

/**
 * The one way components reach the bridge: JSON over /api/v1 and commands over
 * socket.io. The HttpOnly cookie authenticates both; state-changing HTTP calls
 * also carry the CSRF header.
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

let socket: Socket | null = null;
let csrf: Promise<string> | null = null;

export function getSocket(): Socket {
  socket ??= io({ transports: ["websocket"], withCredentials: true });
  return socket;
}

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
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
    throw new BridgeError(error.code, error.message, response.status, error.details);
  }
  return data as T;
}

type WithoutCommandId<T> = T extends { commandId: string } ? Omit<T, "commandId"> : T;

/** Sends a socket command with a fresh commandId (so a buffered replay can't act twice) and awaits its ack. */
export async function command<C extends ClientCommand, R = unknown>(
  name: C,
  payload: WithoutCommandId<ClientCommandPayload<C>>,
): Promise<R> {
  const body = { commandId: crypto.randomUUID(), ...payload };
  // Never through socket.io's offline buffer: a stale prompt or approval must not act on reconnect.
  const ack = await emitFresh<Ack<R>>(getSocket(), name, body, { timeoutMs: COMMAND_TIMEOUT_MS });
  if (!ack.ok) throw new BridgeError(ack.error.code, ack.error.message, undefined, ack.error.details);
  return ack.data;
}

function csrfToken(): Promise<string> {
  csrf ??= fetch("/api/v1/csrf", { credentials: "same-origin" })
    .then((response) => response.json() as Promise<{ csrf: string }>)
    .then((body) => body.csrf)
    .catch((error: unknown) => {
      csrf = null;
      throw error;
    });
  return csrf;
}
