/**
 * The one protocol module shared by bridge and UI. It imports only zod: the UI
 * may import this folder and nothing else from server/.
 */
export {
  parseSessionEvent,
  EventEnvelope,
  EventType,
  GenerationStats,
  StopReason,
  ToolState,
  TurnOutcome,
} from "./events";
export type { EventPayload, SessionEvent } from "./events";
export { Ack, clientCommands, SubscribeResult, WireError } from "./commands";
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
export * from "./fleet";
export * from "./routines";
export * from "./preview";
export { approvalCommands } from "./approval-commands";
export { applyEvents, emptyTranscript } from "./transcript";
export type { PendingApproval, TranscriptItem, TranscriptState } from "./transcript";
export { cacheHitPercent, formatCost, formatSpend } from "./usage";
export * from "./ide";
export { PTY_ACK_EVERY_BYTES, PtyDataArgs, TerminalInfo, ptyCommands } from "./pty";
export {
  AccessView,
  CreateShareLinkBody,
  CreatedShareLink,
  PresenceState,
  PresenceViewer,
  ShareLinkView,
  ShareScope,
  TranscriptSnapshot,
  decodeSnapshot,
  encodeSnapshot,
} from "./sync";
export { LiveTranscript } from "./live-transcript";
export * from "./images";
export { commandReplies, serverMessages, socketCommands } from "./socket";
export type { CommandReply, ServerMessage, ServerMessagePayload, SocketCommand, SocketCommandPayload } from "./socket";
export * from "./responses";
export * from "./people";
export {
  AddedRunner,
  AddRunnerBody,
  FolderQuery,
  RUNNER_SOCKET_PATH,
  RunnerExit,
  RunnerFrameEvent,
  RunnerHello,
  RunnerName,
  RunnerOperation,
  RunnerFilesChanged,
  RunnerOutput,
  RunnerPtyData,
  RunnerPtyExit,
  RunnerRequest,
  RunnerResponse,
  RunnerResults,
  RunnerList,
  RunnerView,
  RunnerAccess,
  UpdateRunnerBody,
  RunnerWelcome,
  RevokedRunner,
} from "./runner";
export type { RunnerOp, RunnerResult } from "./runner";
export { WORKSPACE_ONCE_ONLY } from "./runner-workspace";
export {
  PREVIEW_ONCE_ONLY,
  RunnerStreamData,
  RunnerStreamEnd,
  STREAM_CHUNK_BYTES,
  STREAM_WINDOW_BYTES,
} from "./runner-preview";
export * from "./push";
export * from "./hooks";
export * from "./diagnostics";
