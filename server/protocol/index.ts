/**
 * The one protocol module shared by bridge and UI. It imports only zod: the UI
 * may import this folder and nothing else from server/.
 */
export {
  eventPayloads,
  parseSessionEvent,
  EventEnvelope,
  EventType,
  GenerationStats,
  ToolState,
  TurnOutcome,
  TurnStage,
} from "./events";
export type { EventPayload, SessionEvent } from "./events";
export { clientCommands, SubscribeResult, WireError } from "./commands";
export type { Ack, ClientCommand, ClientCommandPayload } from "./commands";
export {
  ChatStreamBody,
  CreateSessionBody,
  DirectoryListing,
  DirectoryQuery,
  EventsQuery,
  Health,
  SessionMode,
  SessionSummary,
  SessionUsageView,
  UpdateSessionBody,
} from "./api";
export * from "./approvals";
export * from "./checkpoints";
export * from "./review";
export * from "./memory";
export { approvalCommands } from "./approval-commands";
export { applyEvent, applyEvents, emptyTranscript } from "./transcript";
export type { PendingApproval, TranscriptItem, TranscriptState } from "./transcript";
export { addUsage, cacheHitPercent, formatCost, type SessionUsageTotals } from "./usage";
export * from "./ide";
export { PTY_ACK_EVERY_BYTES, PtyDataArgs, PtySnapshot, TerminalInfo, ptyCommands, ptyMessages } from "./pty";
export type { PtyCommand, PtyCommandPayload } from "./pty";
export {
  AccessView,
  CreateShareLinkBody,
  CreatedShareLink,
  MAX_SHARE_EXPIRY_SECONDS,
  PresenceState,
  PresenceViewer,
  ShareLinkView,
  ShareScope,
  TranscriptSnapshot,
  decodeSnapshot,
  encodeSnapshot,
  presenceCommands,
  presenceMessages,
} from "./sync";
export { LiveTranscript } from "./live-transcript";
export * from "./images";
