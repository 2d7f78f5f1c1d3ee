/**
 * Workspace checkpoints: snapshots in a shadow git repository per workspace, diffs between
 * them, restore (rewind) with conflict detection, and materializing a snapshot elsewhere
 * (fork). See shadow-repo.ts for the model and stage.ts for how nested repositories and
 * size limits are handled.
 */
export { openShadowRepo, ShadowRepo } from "./shadow-repo.ts";
export { shadowGitDir } from "./layout.ts";
export { CheckpointService } from "./service.ts";
export { DMAIL_RESTORES_FILES_SETTING } from "./core.ts";
export type { CheckpointRequest, CheckpointServiceDeps, HistoryHost } from "./core.ts";
export type { RewindRequest } from "./rewind.ts";
export type { ForkRequest } from "./fork.ts";
export { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_SNAPSHOT_BYTES, MAX_PATCH_CHARS } from "./constants.ts";
export type {
  DiffResult,
  FileChange,
  FileChangeStatus,
  MaterializeResult,
  RestoreOptions,
  RestoreResult,
  ShadowRepoOptions,
  SkippedPath,
  SnapshotResult,
} from "./types.ts";
