/** What the checkpoint engine hands to its callers (agent loop, transport, fork). */

export type FileChangeStatus = "added" | "modified" | "deleted" | "renamed";

export interface FileChange {
  path: string;
  status: FileChangeStatus;
  /** Lines added; 0 for binary files. */
  additions: number;
  /** Lines removed; 0 for binary files. */
  deletions: number;
  /** For renames: where the file was before. */
  oldPath?: string;
  /** Set when git considers the content binary (no line counts, no text patch). */
  binary?: boolean;
}

export interface SkippedPath {
  path: string;
  reason: string;
}

export interface SnapshotOptions {
  message?: string;
  /**
   * List `changed` (default true). Listing reads every changed blob to count its lines: for a
   * workspace's first snapshot, every file. Checkpoints diff what they need themselves and pass false.
   */
  changes?: boolean;
}

export interface SnapshotResult {
  /** The snapshot's commit in the shadow repository; equal to the previous one when nothing changed. */
  commit: string;
  /** Changes since the previous snapshot (empty with `changes: false`). */
  changed: FileChange[];
  /** Paths whose current content this snapshot could not capture (limits, unreadable, …). */
  skipped: SkippedPath[];
}

export interface DiffResult {
  files: FileChange[];
  /** Unified patch (binary files appear as "Binary files … differ"). */
  patch: string;
  /** True when `patch` was cut at MAX_PATCH_CHARS. */
  truncated: boolean;
  /** When comparing with the working tree: paths whose current content could not be captured. */
  skipped: SkippedPath[];
}

export interface RestoreOptions {
  /** The latest snapshot the agent took; paths that differ from it were changed outside the agent. */
  baseline?: string;
  /** Overwrite changes made outside the agent instead of refusing. */
  force?: boolean;
  /** The message of the snapshot of the result (`after`). */
  message?: string;
  /**
   * A snapshot of the work tree the caller has just taken (a rewind's conflict check and undo
   * point): it is `before`, instead of another look at every file. A file created since is left
   * alone, one changed since is overwritten as the caller decided.
   */
  current?: string;
}

export interface RestoreResult {
  /** Snapshot of the workspace taken just before restoring: `restore(before)` undoes the restore. */
  before: string;
  /** Paths written (created or overwritten), sorted. */
  written: string[];
  /** Paths deleted, sorted. */
  deleted: string[];
  /** Paths the restore left alone because their content was not captured (size limits) then or now. */
  untouched: string[];
  /**
   * A snapshot of the result, when it is known without looking (nothing was left alone: the work
   * tree is the target's tree), so the caller needs no snapshot of its own; a change made in the
   * meantime shows up against it like any later edit.
   */
  after?: string;
}

export interface MaterializeResult {
  written: string[];
  deleted: string[];
}

export interface ShadowRepoOptions {
  /** Data directory; defaults to $WORLDLINE_HOME or ~/.worldline. Snapshots live in `<home>/snapshots/`. */
  home?: string;
  /** Files larger than this are skipped (reported). */
  maxFileBytes?: number;
  /** New content one snapshot may hash; the rest is skipped (reported) and captured later. */
  maxSnapshotBytes?: number;
  /** Extra gitignore-style patterns, on top of the workspace skip list (server/ignore) and the workspace's .gitignore files. */
  extraIgnores?: readonly string[];
}

/** A Changes-view revert of one file: the content it gets back, or its removal. */
export interface RevertSpec {
  path: string;
  /** A rename's old path: a whole-file revert writes the base content there. */
  oldPath?: string;
  status: FileChangeStatus;
  /** A hunk revert: the file's whole new text (the hunk undone); a symlink is refused. */
  hunkText?: string;
  /** A whole-file revert: the base version's bytes (absent for an added file, which is deleted). */
  base?: Uint8Array;
}

/**
 * The shadow repository of one workspace and the workspace's files as checkpoints touch them,
 * wherever the workspace is: `ShadowRepo` in process on this machine, a runner's through its
 * host (server/runners/remote-snapshots.ts), which does the same with its own ShadowRepo there.
 */
export interface SnapshotRepo {
  /** Names the repository among every machine's (setting keys): the path here, `<runner>:<path>` on a runner. */
  readonly key: string;
  snapshot(options?: SnapshotOptions): Promise<SnapshotResult>;
  diff(from: string, to?: string): Promise<DiffResult>;
  changedSince(commit: string): Promise<string[]>;
  restore(target: string, options?: RestoreOptions): Promise<RestoreResult>;
  fileAt(commit: string, path: string): Promise<Buffer | undefined>;
  /** A workspace file now as a snapshot sees it (a symlink's target text); undefined when gone. */
  readNow(path: string): Promise<Buffer | undefined>;
  /** Writes a revert back (`dryRun`: only the checks, which throw `checkpoint:blocked` or `review:invalid`). */
  revert(spec: RevertSpec, options?: { dryRun?: boolean }): Promise<MaterializeResult>;
  /**
   * A new folder `<home>/forks/<name>` (on the workspace's machine) holding snapshot `target`,
   * a detached git worktree of the workspace's repository with `worktree`; its real path.
   */
  fork(target: string, options: { name: string; worktree: boolean }): Promise<string>;
}
