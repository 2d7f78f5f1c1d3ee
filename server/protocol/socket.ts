import { z } from "zod";
import { ApprovalChange } from "./approvals";
import { clientCommands } from "./commands";
import { boardCommands, boardMessages } from "./fleet";
import { FilesChanged, FilesWatchCommand } from "./ide";
import { ptyCommands, ptyMessages } from "./pty";
import { PortsChanged, PortsWatchCommand } from "./preview";
import { PresenceState } from "./sync";

/** Every command a tab sends the bridge over socket.io, by name: the UI's one command path uses it. */
export const socketCommands = {
  ...clientCommands,
  ...ptyCommands,
  ...boardCommands,
  "files.watch": FilesWatchCommand,
  "files.unwatch": FilesWatchCommand,
  "ports.watch": PortsWatchCommand,
  "ports.unwatch": PortsWatchCommand,
} as const;
export type SocketCommand = keyof typeof socketCommands;
export type SocketCommandPayload<C extends SocketCommand> = z.infer<(typeof socketCommands)[C]>;

/**
 * A batch of a session's live events. The batch is checked here; each event against its own
 * schema by the receiver, so one that drifted is left out (and reported) rather than the batch.
 */
const SessionEventsMessage = z.object({ sessionId: z.string(), events: z.array(z.unknown()) });

/**
 * Every JSON message the bridge sends a tab, by name. The UI parses each one with these, in
 * production too: a bridge and a page of different builds then fail loudly, not with garbage.
 * (`pty.data` is binary: PtyDataArgs.)
 */
export const serverMessages = {
  "session.events": SessionEventsMessage,
  "presence.state": PresenceState,
  "files.changed": FilesChanged,
  "approvals.changed": ApprovalChange,
  "ports.changed": PortsChanged,
  ...ptyMessages,
  ...boardMessages,
} as const;
export type ServerMessage = keyof typeof serverMessages;
export type ServerMessagePayload<M extends ServerMessage> = z.infer<(typeof serverMessages)[M]>;
