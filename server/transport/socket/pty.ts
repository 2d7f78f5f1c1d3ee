import type { Server, Socket } from "socket.io";
import { ptyCommands, type TerminalInfo } from "../../protocol";
import type { ViewerSink } from "../../pty";
import type { BridgeServices } from "../services";
import { onCommand, type CommandCache } from "./handler";

const roomOf = (sessionId: string) => `pty:${sessionId}`;

/** Every tab that listed a session's terminals hears when one opens, is renamed or closes. */
export function attachPtyBroadcast(io: Server, services: BridgeServices): void {
  const { ptys, terminals } = services;
  // In team mode the room spans the bridges (socket.io's Redis adapter) and the list is the deployment's.
  const announce = (info: TerminalInfo) =>
    void terminals.list(info.sessionId).then(
      (list) => io.to(roomOf(info.sessionId)).emit("pty.terminals", { sessionId: info.sessionId, terminals: list }),
      (error: unknown) => console.error("[worldline] listing terminals failed:", error),
    );
  ptys.on({ opened: announce, renamed: announce, closed: announce });
}

/** A tab's terminals: lifecycle commands, viewing (snapshot then binary output), input, resize and acks. */
export function registerPtyHandlers(socket: Socket, services: BridgeServices, commands: CommandCache): void {
  const { ptys, terminals } = services;
  /** Terminals this socket views, by id, with their session. */
  const viewing = new Map<string, string>();

  const sinkFor = (terminalId: string): ViewerSink => ({
    data: (chunk) => socket.emit("pty.data", terminalId, chunk),
    snapshot: (snapshot) => socket.emit("pty.snapshot", { terminalId, ...snapshot }),
    resync: () => socket.emit("pty.resync", { terminalId }),
    exit: (exitCode) => {
      viewing.delete(terminalId);
      socket.emit("pty.exit", { terminalId, exitCode });
    },
  });

  onCommand(socket, "pty.list", ptyCommands["pty.list"], async ({ sessionId }) => {
    await services.sessions.get(sessionId);
    await socket.join(roomOf(sessionId));
    return { terminals: await terminals.list(sessionId) };
  });

  onCommand(
    socket,
    "pty.create",
    ptyCommands["pty.create"],
    async ({ sessionId, title, cols, rows }) => {
      await services.sessions.get(sessionId);
      return ptys.create(sessionId, { title, cols, rows });
    },
    commands,
  );

  onCommand(
    socket,
    "pty.rename",
    ptyCommands["pty.rename"],
    async ({ sessionId, terminalId, title }) => terminals.rename(sessionId, terminalId, title),
    commands,
  );

  onCommand(
    socket,
    "pty.close",
    ptyCommands["pty.close"],
    async ({ sessionId, terminalId }) => ({ exitCode: await terminals.close(sessionId, terminalId) }),
    commands,
  );

  onCommand(
    socket,
    "pty.run",
    ptyCommands["pty.run"],
    async ({ sessionId, line }) => {
      await services.sessions.get(sessionId);
      const info = await ptys.run(sessionId, line);
      return { terminalId: info.terminalId };
    },
    commands,
  );

  onCommand(socket, "pty.attach", ptyCommands["pty.attach"], async ({ sessionId, terminalId, cols, rows }) => {
    const size = cols && rows ? { cols, rows } : undefined;
    const attached = await terminals.attach(sessionId, terminalId, socket.id, sinkFor(terminalId), size);
    viewing.set(terminalId, sessionId);
    return attached;
  });

  onCommand(socket, "pty.detach", ptyCommands["pty.detach"], async ({ terminalId }) => {
    const sessionId = viewing.get(terminalId);
    viewing.delete(terminalId);
    if (sessionId) quietly(() => terminals.detach(sessionId, terminalId, socket.id));
    return null;
  });

  onCommand(socket, "pty.input", ptyCommands["pty.input"], async ({ sessionId, terminalId, data }) => {
    terminals.input(sessionId, terminalId, socket.id, data);
    return null;
  });

  onCommand(socket, "pty.resize", ptyCommands["pty.resize"], async ({ sessionId, terminalId, cols, rows }) => {
    terminals.resize(sessionId, terminalId, socket.id, cols, rows);
    return null;
  });

  onCommand(socket, "pty.ack", ptyCommands["pty.ack"], async ({ terminalId, bytes }) => {
    const sessionId = viewing.get(terminalId);
    if (sessionId) quietly(() => terminals.ack(sessionId, terminalId, socket.id, bytes));
    return null;
  });

  socket.on("disconnect", () => {
    for (const [terminalId, sessionId] of viewing) quietly(() => terminals.detach(sessionId, terminalId, socket.id));
    viewing.clear();
  });

  function quietly(call: () => void): void {
    try {
      call();
    } catch {
      // Closed meanwhile: nothing left to detach from or ack.
    }
  }
}
