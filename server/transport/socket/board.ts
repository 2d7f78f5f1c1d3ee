import type { Socket } from "socket.io";
import { boardCommands } from "../../protocol";
import type { BridgeServices } from "../services";
import { onCommand } from "./handler";
import { personOfSocket } from "../people";
import { WorldlineError } from "../../errors";

/**
 * The board's feed: after `board.subscribe` the tab gets a `board.card` for every
 * session it may see, then one whenever a card changes, and `board.removed` when a session goes.
 * A named person sees the sessions their level allows, as in the session list.
 */
export function registerBoardHandlers(socket: Socket, services: BridgeServices): void {
  let stop: (() => void) | null = null;
  const person = personOfSocket(socket);
  const visible = async (sessionId: string) =>
    !person || (await services.people.levelOn(person.id, sessionId)) !== null;

  onCommand(socket, "board.subscribe", boardCommands["board.subscribe"], async () => {
    const board = services.board;
    if (!board) throw new WorldlineError("board:unavailable", "This bridge serves no board.");
    if (stop) return { subscribed: true };
    stop = () => undefined; // a second subscribe while the first reads the sessions is a no-op
    const unwatch = await board.watch({
      visible,
      card: (card) => socket.emit("board.card", card),
      removed: (id) => socket.emit("board.removed", { id }),
    });
    if (!socket.connected) unwatch();
    else stop = unwatch;
    return { subscribed: true };
  });

  onCommand(socket, "board.unsubscribe", boardCommands["board.unsubscribe"], async () => {
    stop?.();
    stop = null;
    return null;
  });

  socket.on("disconnect", () => {
    stop?.();
    stop = null;
  });
}
