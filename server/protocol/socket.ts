import * as z from "zod";
import { ApprovalChange, ApprovalView } from "./approvals";
import { clientCommands, SubscribeReply } from "./commands";
import { boardCommands, boardMessages } from "./fleet";
import { FilesChanged, FilesWatchCommand } from "./ide";
import { ptyCommands, ptyMessages, TerminalInfo } from "./pty";
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
 * The `data` of the ack of each command whose answer the UI reads, by name: the UI's command path
 * parses it with this (the other commands' answers are not read, so they stay `unknown`).
 */
export const commandReplies = {
  "session.subscribe": SubscribeReply,
  "approvals.subscribe": z.object({ pending: z.array(ApprovalView) }),
  "pty.list": z.object({ terminals: z.array(TerminalInfo) }),
  "pty.create": TerminalInfo,
  "pty.run": z.object({ terminalId: z.string() }),
} satisfies Partial<Record<SocketCommand, z.ZodType>>;
export type CommandReply<C extends SocketCommand> = C extends keyof typeof commandReplies
  ? z.output<(typeof commandReplies)[C]>
  : unknown;

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
