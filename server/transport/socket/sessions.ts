import type { Socket } from "socket.io";
import { clientCommands, type EventEnvelope, type SubscribeResult } from "../../protocol";
import type { BridgeServices } from "../services";
import { onCommand, type CommandCache } from "./handler";

/** A tab's view of sessions: subscribe with the last seq it has, then live events. */
export function registerSessionHandlers(socket: Socket, services: BridgeServices, commands: CommandCache): void {
  const subscriptions = new Map<string, () => void>();

  onCommand(socket, "session.subscribe", clientCommands["session.subscribe"], async ({ sessionId, afterSeq = 0 }): Promise<SubscribeResult> => {
    await services.sessions.get(sessionId);
    subscriptions.get(sessionId)?.();
    // Live events that arrive while the past is read are held, then de-duplicated by seq.
    let replaying = true;
    const held: EventEnvelope[] = [];
    let sentUpTo = afterSeq;
    const unsubscribe = services.log.subscribe(sessionId, (event) => {
      if (replaying) return void held.push(event);
      if (event.seq <= sentUpTo) return;
      sentUpTo = event.seq;
      socket.emit("session.events", { sessionId, events: [event] });
    });
    subscriptions.set(sessionId, unsubscribe);
    const past = await services.log.read(sessionId, afterSeq);
    const events = past.concat(held.filter((event) => event.seq > (past.at(-1)?.seq ?? afterSeq)));
    sentUpTo = events.at(-1)?.seq ?? afterSeq;
    replaying = false;
    return { events, lastSeq: sentUpTo };
  });

  onCommand(socket, "session.unsubscribe", clientCommands["session.unsubscribe"], async ({ sessionId }) => {
    subscriptions.get(sessionId)?.();
    subscriptions.delete(sessionId);
    return null;
  });

  onCommand(
    socket,
    "turn.prompt",
    clientCommands["turn.prompt"],
    async ({ sessionId, text, reasoning }) => {
      const started = await services.runtime.prompt(sessionId, text, { reasoning });
      return { turnId: started.turnId, queued: started.queued };
    },
    commands,
  );

  onCommand(
    socket,
    "turn.steer",
    clientCommands["turn.steer"],
    async ({ sessionId, text }) => services.runtime.steer(sessionId, text),
    commands,
  );

  onCommand(
    socket,
    "session.compact",
    clientCommands["session.compact"],
    async ({ sessionId, focus }) => {
      const started = await services.runtime.compact(sessionId, focus);
      return { turnId: started.turnId, queued: started.queued };
    },
    commands,
  );

  onCommand(
    socket,
    "turn.cancel",
    clientCommands["turn.cancel"],
    async ({ sessionId }) => ({ cancelled: await services.runtime.cancel(sessionId) }),
    commands,
  );

  socket.on("disconnect", () => {
    for (const unsubscribe of subscriptions.values()) unsubscribe();
    subscriptions.clear();
  });
}
