import type { Server, Socket } from "socket.io";
import { ptyCommands, type TerminalInfo } from "../../protocol";
import type { ViewerSink } from "../../pty";
import type { BridgeServices } from "../services";
import { onCommand, type CommandCache } from "./handler";

const roomOf = (sessionId: string) => `pty:${sessionId}`;

/** Every tab that listed a session's terminals hears when one opens, is renamed or closes. */
export function attachPtyBroadcast(io: Server, services: BridgeServices): void {
  const { ptys } = services;
  const announce = (info: TerminalInfo) =>
    io
      .to(roomOf(info.sessionId))
      .emit("pty.terminals", { sessionId: info.sessionId, terminals: ptys.list(info.sessionId) });
  ptys.on({ opened: announce, renamed: announce, closed: announce });
}

/** A tab's terminals: lifecycle commands, viewing (snapshot then binary output), input, resize and acks. */
export function registerPtyHandlers(socket: Socket, services: BridgeServices, commands: CommandCache): void {
  const { ptys } = services;
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
    return { terminals: ptys.list(sessionId) };
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
    async ({ sessionId, terminalId, title }) => ptys.rename(sessionId, terminalId, title),
    commands,
  );

  onCommand(
    socket,
    "pty.close",
    ptyCommands["pty.close"],
    async ({ sessionId, terminalId }) => ({ exitCode: await ptys.close(sessionId, terminalId) }),
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
    const terminal = ptys.get(sessionId, terminalId);
    viewing.set(terminalId, sessionId);
    terminal.attach(socket.id, sinkFor(terminalId), cols && rows ? { cols, rows } : undefined);
    return { terminalId, title: terminal.title };
  });

  onCommand(socket, "pty.detach", ptyCommands["pty.detach"], async ({ terminalId }) => {
    const sessionId = viewing.get(terminalId);
    viewing.delete(terminalId);
    if (sessionId) findTerminal(sessionId, terminalId)?.detach(socket.id);
    return null;
  });

  onCommand(socket, "pty.input", ptyCommands["pty.input"], async ({ sessionId, terminalId, data }) => {
    ptys.get(sessionId, terminalId).input(socket.id, data);
    return null;
  });

  onCommand(socket, "pty.resize", ptyCommands["pty.resize"], async ({ sessionId, terminalId, cols, rows }) => {
    ptys.get(sessionId, terminalId).resize(socket.id, cols, rows);
    return null;
  });

  onCommand(socket, "pty.ack", ptyCommands["pty.ack"], async ({ terminalId, bytes }) => {
    const sessionId = viewing.get(terminalId);
    if (sessionId) findTerminal(sessionId, terminalId)?.ack(socket.id, bytes);
    return null;
  });

  socket.on("disconnect", () => {
    for (const [terminalId, sessionId] of viewing) findTerminal(sessionId, terminalId)?.detach(socket.id);
    viewing.clear();
  });

  function findTerminal(sessionId: string, terminalId: string) {
    try {
      return ptys.get(sessionId, terminalId);
    } catch {
      return undefined; // Closed meanwhile: nothing left to detach from or ack.
    }
  }
}
