/**
 * The only module that imports Prisma. Domain modules call these functions with
 * the `Db` handle they were given at start-up.
 */
export { openDb, providerOf } from "./db";
export type { Db } from "./db";
export { isUniqueViolation } from "./dialect";
export {
  DEFAULT_SESSION_TITLE,
  createSession,
  deleteSession,
  getSession,
  listSessions,
  setSessionStatus,
  updateSession,
} from "./sessions";
export type { SessionRow } from "./sessions";
export { insertEvents, lastEventSeq, lastEventSeqs, lastTurnBoundary, readEvents, readTurnEvents } from "./events";
export type { StoredEvent } from "./events";
export { appendHistory, readHistory, truncateHistory } from "./history";
export type { HistoryRow } from "./history";
export { claimSession, FencedError, isFenced, releaseClaim, sessionEpoch, takeCheckpointNumber } from "./claims";
export type { Claim } from "./claims";
export { adoptWaitingTurn, orphanWaitingTurns, saveRunState, type WaitingTurn } from "./waiting-turns";
export { durably, storeHealth, turnNotices } from "./durable";
export { checkConsistency, completedOutcome, settleCompletedTurn } from "./consistency";

export type { DurableOptions } from "./durable";
export { faultError, storeFault } from "./faults";

export { createTurn, finishTurn, getTurn, lastStopReason, sessionUsage, usageSince, type SessionUsage } from "./turns";
export * from "./routines";
export {
  allOwners,
  beatOwner,
  databaseNow,
  interruptOrphanApproval,
  interruptOrphanTurn,
  freshOwners,
  orphanApprovals,
  orphanTurns,
  ownerHeartbeat,
  pruneOwners,
  removeOwner,
  runningTurnOwner,
  settleIdleSessions,
} from "./owners";
export { getSetting, putSetting } from "./settings";
export { approvalsMark, createApproval, decidePendingApproval, getApproval, listApprovals } from "./approvals";
export type { ApprovalRow } from "./approvals";
export { createRule, deleteRule, getWorkspaceByPath, listApplicableRules, listRules } from "./rules";
export { listRecentWorkspaces } from "./workspaces";
export {
  createCheckpoint,
  getCheckpoint,
  getCheckpointByNumber,
  lastCheckpoint,
  listCheckpoints,
  settleAnnouncedCheckpoints,
} from "./checkpoints";
export type { CheckpointRow } from "./checkpoints";
export { searchSessionIds } from "./search";
export { newId } from "./ids";
export { createShareLink, eventAt, findShareLinkByHash, listShareLinks, revokeShareLink } from "./share-links";
export type { ShareLinkRow } from "./share-links";
export { createMemory, deleteMemory, findMemory, listMemories } from "./memory";
export type { MemoryRow } from "./memory";
export { listCommands, recordCommand } from "./audit";
export type { AuditedCommand } from "./audit";
export {
  countUsers,
  createApiToken,
  createAuthSession,
  createIdentity,
  createUser,
  deleteSessionAccess,
  clearSignInAttempts,
  countSignInAttempt,
  pruneSignInAttempts,
  findApiTokenByHash,
  findAuthSessionByHash,
  findIdentity,
  findUserByEmail,
  findUserById,
  findUserByName,
  listApiTokens,
  listUsers,
  putSessionAccess,
  revokeApiToken,
  revokeAuthSession,
  revokeAuthSessionsOf,
  sessionAccessFor,
  sessionAccessOf,
  sessionIdsFor,
  sessionOwnerOf,
  touchApiToken,
  updateUser,
  userBudget,
} from "./people";
export type { ApiTokenRow, UserRow } from "./people";
export {
  addRunner,
  exchangeEnrollment,
  findRunnerByCredentialHash,
  findRunnerByEnrollHash,
  getRunner,
  listRunners,
  markDuplicate,
  renameRunner,
  revokeRunner,
  rotateCredential,
  setRunnerAccess,
  touchRunner,
} from "./runners";
export type { RunnerRow } from "./runners";
export { createWorktree, getWorktree, listWorktrees, updateWorktree, worktreesOf } from "./worktrees";
export type { WorktreeRow } from "./worktrees";
export { sessionActivity } from "./fleet";
export {
  claimDelivery,
  createActionToken,
  deleteFocus,
  deletePushSubscription,
  focusedOwners,
  listPushSubscriptions,
  pruneActionTokens,
  pruneDeliveries,
  pruneFocus,
  putFocus,
  refreshFocus,
  savePushSubscription,
  settingOnce,
  useActionToken,
} from "./push";
export type { PushSubscriptionRow } from "./push";
