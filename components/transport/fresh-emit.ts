import type { Socket } from "socket.io-client";

/**
 * A command made while offline waits at most this long for the connection to return;
 * after that it is dropped, never sent: a prompt or approval from minutes ago must not
 * act when a laptop wakes up (socket.io would otherwise flush its buffer on reconnect).
 */
export const STALE_COMMAND_MS = 10_000;

export class StaleCommandError extends Error {
  readonly code = "transport:offline";
  constructor(name: string) {
    super(`Not connected to the bridge; "${name}" was not sent. Try again when the connection is back.`);
  }
}

/**
 * Emits with an ack, but only on a live connection: while disconnected it waits for
 * `connect` up to `maxQueueMs`, then gives up without the command ever reaching
 * socket.io's send buffer.
 */
export async function emitFresh(
  socket: Socket,
  name: string,
  body: unknown,
  options: { timeoutMs: number; maxQueueMs?: number },
): Promise<unknown> {
  if (!socket.connected) await waitForConnect(socket, name, options.maxQueueMs ?? STALE_COMMAND_MS);
  const answer: unknown = await socket.timeout(options.timeoutMs).emitWithAck(name, body);
  return answer;
}

function waitForConnect(socket: Socket, name: string, maxQueueMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onConnect = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      socket.off("connect", onConnect);
      reject(new StaleCommandError(name));
    }, maxQueueMs);
    socket.once("connect", onConnect);
  });
}
