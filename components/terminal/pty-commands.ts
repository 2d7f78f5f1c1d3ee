"use client";

import type { Ack, PtyCommand, PtyCommandPayload } from "@/server/protocol";
import { BridgeError, getSocket } from "@/components/transport/client";

/** A command that gets no answer in this time is reported as failed, not left hanging. */
const PTY_COMMAND_TIMEOUT_MS = 15_000;

type WithoutCommandId<T> = T extends { commandId: string } ? Omit<T, "commandId"> & { commandId?: string } : T;

/** Sends a terminal command over the shared socket and awaits its ack. */
export async function ptyCommand<C extends PtyCommand, R = unknown>(
  name: C,
  payload: WithoutCommandId<PtyCommandPayload<C>>,
): Promise<R> {
  const body = needsCommandId(name) ? { commandId: crypto.randomUUID(), ...payload } : payload;
  const ack = (await getSocket().timeout(PTY_COMMAND_TIMEOUT_MS).emitWithAck(name, body)) as Ack<R>;
  if (!ack.ok) throw new BridgeError(ack.error.code, ack.error.message, undefined, ack.error.details);
  return ack.data;
}

/** Fire-and-forget messages on the hot path (keystrokes, acks, resizes): no ack round trip. */
export function ptySend<C extends "pty.input" | "pty.ack" | "pty.resize" | "pty.detach">(
  name: C,
  payload: PtyCommandPayload<C>,
): void {
  getSocket().emit(name, payload);
}

function needsCommandId(name: PtyCommand): boolean {
  return name === "pty.create" || name === "pty.rename" || name === "pty.close" || name === "pty.run";
}
