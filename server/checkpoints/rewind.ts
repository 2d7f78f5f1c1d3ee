import type { RewindResult } from "../protocol";
import { WorldlineError } from "../errors";
import * as store from "../store";
import { noSnapshot, storedFiles, type Captured, type CheckpointCore, type CheckpointRow } from "./core.ts";
import { checkpointSettings } from "./timeline.ts";
import type { RestoreResult, SnapshotRepo } from "./types.ts";

/** Setting key prefix: what a rewind did and the whole history it replaced, stored with its undo point. */
const REWIND_RECORD = "checkpoints.rewind:";

interface SavedEntry {
  kind: string;
  data: string;
}

interface RewindRecord {
  target: string;
  conversation: boolean;
  files: boolean;
  /** The full history before the rewind (only when the conversation was rewound). */
  history?: SavedEntry[];
}

export interface RewindRequest {
  checkpoint: string | number;
  conversation: boolean;
  files: boolean;
  force: boolean;
}

/**
 * Rewinds a session to a checkpoint: its conversation, its files, or both. Refuses with
 * `checkpoint:conflict` (the paths) when a file the rewind would change was edited outside
 * the agent since the target; `force` overwrites. First records an undo point (a `rewind`
 * checkpoint holding the workspace and the whole history as they are), so any rewind can be undone.
 */
export async function rewind(
  core: CheckpointCore,
  sessionId: string,
  request: RewindRequest,
  options: { undo?: boolean } = {},
): Promise<RewindResult> {
  const { db, sessions } = core.deps;
  const session = await sessions.get(sessionId);
  refuseWhileRunning(core, sessionId);
  await core.settled(sessionId);
  if (!request.conversation && !request.files) {
    throw new WorldlineError("checkpoint:invalid", "Nothing to rewind: set conversation, files or both.");
  }
  const target = await core.find(sessionId, request.checkpoint);
  const workspace = session.workspace.path;
  let now: Captured | undefined;
  if (request.files) {
    if (!target.snapshot) throw noSnapshot(target);
    const repo = await core.repo(sessionId, workspace);
    // One look at the work tree serves the conflict check, the undo point and the restore.
    now = await capture(core, sessionId, repo, `before rewind to #${target.number}`);
    if (!request.force) {
      const paths = await conflictingPaths(core, repo, sessionId, target, now.result.commit);
      if (paths.length > 0) throw conflictError(paths);
    }
  }
  const records = request.conversation ? await historyAt(core, target) : undefined;
  const current = await store.readHistory(db, sessionId);
  const undoPoint = await recordUndoPoint(core, sessionId, {
    target: target.id,
    conversation: request.conversation,
    files: request.files,
    history: request.conversation ? current.map(({ kind, data }) => ({ kind, data })) : undefined,
    now,
  });

  let outcome: Pick<RestoreResult, "written" | "deleted" | "untouched"> = { written: [], deleted: [], untouched: [] };
  // Both writes happen under the runtime's guard, so no turn starts on a half-rewound session.
  await core.history.rewriteHistory(sessionId, async () => {
    // Again now that no turn can start here: one may have started elsewhere since the first look.
    await core.deps.log.open(sessionId);
    refuseWhileRunning(core, sessionId);
    if (records) await replaceHistory(db, sessionId, current, records);
    if (now) outcome = await restoreFiles(core, now, target, `rewind to #${target.number}`);
  });
  announceRewind(core, target, undoPoint, request, outcome, options.undo);
  return {
    checkpoint: target.id,
    undo_checkpoint: undoPoint.id,
    conversation: request.conversation,
    files: request.files,
    written: outcome.written,
    deleted: outcome.deleted,
    untouched: outcome.untouched,
  };
}

/** Undoes the last rewind: rewinds to its undo point, the same parts it rewound. */
export async function undoRewind(core: CheckpointCore, sessionId: string, force: boolean): Promise<RewindResult> {
  await core.deps.sessions.get(sessionId);
  const rows = await store.listCheckpoints(core.deps.db, sessionId);
  const last = rows.filter((row) => row.reason === "rewind").at(-1);
  const record = last ? await rewindRecord(core, last.id) : undefined;
  if (!last || !record) throw new WorldlineError("checkpoint:not_found", "There is no rewind to undo in this session.");
  return rewind(
    core,
    sessionId,
    { checkpoint: last.id, conversation: record.conversation, files: record.files, force },
    { undo: true },
  );
}

/** `/undo`: rewinds conversation and files to the start of the last turn still in the history. */
export async function undoTurn(core: CheckpointCore, sessionId: string, force: boolean): Promise<RewindResult> {
  await core.deps.sessions.get(sessionId);
  await core.settled(sessionId);
  const length = (await store.readHistory(core.deps.db, sessionId)).length;
  const rows = await store.listCheckpoints(core.deps.db, sessionId);
  const start = rows.filter((row) => row.reason === "turn" && row.historyPosition < length).at(-1);
  if (!start) throw new WorldlineError("checkpoint:not_found", "There is no turn to undo in this session.");
  return rewind(core, sessionId, { checkpoint: start.id, conversation: true, files: start.snapshot !== null, force });
}

/**
 * D-Mail: the loop sent the conversation back to a checkpoint; restore its files too when
 * the user enabled it. Never overwrites edits made outside the agent: on a conflict it
 * leaves the files and says so. Resolves to true when files were restored.
 */
export async function revertFilesForDmail(
  core: CheckpointCore,
  sessionId: string,
  checkpointId: string,
): Promise<boolean> {
  const { log } = core.deps;
  if (!(await checkpointSettings(core, sessionId)).dmail_restores_files) return false;
  const session = await core.deps.sessions.get(sessionId);
  const target = await core.find(sessionId, checkpointId).catch(() => undefined); // no such checkpoint: nothing to restore, the caller says so
  if (!target?.snapshot) return false;
  const repo = await core.repo(sessionId, session.workspace.path);
  const now = await capture(core, sessionId, repo, `before D-Mail to #${target.number}`);
  const paths = await conflictingPaths(core, repo, sessionId, target, now.result.commit);
  if (paths.length > 0) {
    log.append(sessionId, {
      type: "notice",
      payload: {
        level: "warning",
        text: `D-Mail: files not restored, because ${paths.join(", ")} changed outside the agent.`,
      },
    });
    return false;
  }
  const undoPoint = await recordUndoPoint(core, sessionId, {
    target: target.id,
    conversation: false,
    files: true,
    now,
  });
  const outcome = await restoreFiles(core, now, target, `D-Mail to #${target.number}`);
  announceRewind(core, target, undoPoint, { conversation: false, files: true }, outcome);
  return true;
}

/**
 * An undo point for a change made outside a rewind (a revert in the Changes view): a `rewind`
 * checkpoint of the workspace as it is, recorded like a files-only rewind's, so POST
 * …/rewind/undo (or a rewind to it) puts the files back. Call `setBaseline` after writing.
 */
export function recordFilesUndoPoint(core: CheckpointCore, sessionId: string): Promise<CheckpointRow> {
  return recordUndoPoint(core, sessionId, { conversation: false, files: true });
}

/**
 * Records an undo point: a `rewind` checkpoint of the workspace and history as they are, with
 * what undoing to it restores (`target` defaults to the undo point itself).
 */
async function recordUndoPoint(
  core: CheckpointCore,
  sessionId: string,
  { now, ...record }: Omit<RewindRecord, "target"> & { target?: string; now?: Captured },
): Promise<CheckpointRow> {
  const { db } = core.deps;
  const historyLength = (await store.readHistory(db, sessionId)).length;
  const last = await store.lastCheckpoint(db, sessionId);
  const undoPoint = await core.serial(sessionId, () =>
    core.record(
      {
        sessionId,
        turn: last?.turn ?? 0,
        step: last?.step ?? 0,
        reason: "rewind",
        historyPosition: historyLength,
      },
      { captured: now },
    ),
  );
  await store.putSetting(db, REWIND_RECORD + undoPoint.id, { ...record, target: record.target ?? undoPoint.id });
  return undoPoint;
}

/** A snapshot of the workspace now, taken in the session's checkpoint order. */
async function capture(
  core: CheckpointCore,
  sessionId: string,
  repo: SnapshotRepo,
  message: string,
): Promise<Captured> {
  return { repo, result: await core.serial(sessionId, () => repo.snapshot({ message, changes: false })) };
}

/**
 * Makes the workspace equal to the target's snapshot, from the snapshot of it the caller just took
 * (`now`, its conflict check and undo point); the result becomes the agent's baseline.
 */
async function restoreFiles(
  core: CheckpointCore,
  { repo, result }: Captured,
  target: CheckpointRow,
  message: string,
): Promise<RestoreResult> {
  if (!target.snapshot) throw noSnapshot(target);
  const outcome = await repo.restore(target.snapshot, { force: true, message, current: result.commit });
  await core.setBaseline(repo, outcome.after ?? (await repo.snapshot({ message, changes: false })).commit);
  return outcome;
}

/** Tells every tab a rewind happened (rewind, its undo, or a D-Mail's file restore). */
function announceRewind(
  core: CheckpointCore,
  target: CheckpointRow,
  undoPoint: CheckpointRow,
  parts: { conversation: boolean; files: boolean },
  outcome: Pick<RestoreResult, "written" | "deleted">,
  undo = false,
): void {
  core.deps.log.append(target.sessionId, {
    type: "checkpoint.rewound",
    payload: {
      checkpointId: target.id,
      number: target.number,
      undoCheckpointId: undoPoint.id,
      undoNumber: undoPoint.number,
      conversation: parts.conversation,
      files: parts.files,
      written: outcome.written.length,
      deleted: outcome.deleted.length,
      ...(undo ? { undo: true } : {}),
    },
  });
}

/**
 * The history as it was at `target`. A conversation rewind replaces history, so a checkpoint
 * taken before one lives on in the history saved by the first such rewind after it.
 */
export async function historyAt(core: CheckpointCore, target: CheckpointRow): Promise<SavedEntry[]> {
  const rows = await store.listCheckpoints(core.deps.db, target.sessionId);
  for (const row of rows) {
    if (row.reason !== "rewind" || row.number < target.number) continue;
    const saved = await rewindRecord(core, row.id);
    if (saved?.history) return saved.history.slice(0, target.historyPosition);
  }
  const current = await store.readHistory(core.deps.db, target.sessionId);
  return current.slice(0, target.historyPosition).map(({ kind, data }) => ({ kind, data }));
}

/**
 * Paths the rewind would change (from the work tree's snapshot `now`) that were edited outside the agent after the target:
 * changed since the agent's last snapshot (baseline), or marked as outside edits by a later checkpoint.
 */
async function conflictingPaths(
  core: CheckpointCore,
  repo: SnapshotRepo,
  sessionId: string,
  target: CheckpointRow,
  now: string,
): Promise<string[]> {
  const pending = await repo.diff(target.snapshot as string, now);
  const touched = new Set(pending.files.flatMap((file) => (file.oldPath ? [file.path, file.oldPath] : [file.path])));
  if (touched.size === 0) return [];
  const outside = new Set<string>();
  const baseline = await core.baseline(repo);
  if (baseline && baseline !== now)
    for (const file of (await repo.diff(baseline, now)).files) {
      outside.add(file.path);
      if (file.oldPath) outside.add(file.oldPath);
    }
  for (const row of await store.listCheckpoints(core.deps.db, sessionId)) {
    if (row.number <= target.number) continue;
    for (const file of storedFiles(row)) {
      if (!file.outside) continue;
      outside.add(file.path);
      if (file.oldPath) outside.add(file.oldPath);
    }
  }
  return [...touched].filter((path) => outside.has(path)).sort();
}

function conflictError(paths: string[]): WorldlineError {
  const shown = paths.slice(0, 10).join(", ") + (paths.length > 10 ? ` and ${paths.length - 10} more` : "");
  return new WorldlineError(
    "checkpoint:conflict",
    `${paths.length} file${paths.length === 1 ? " was" : "s were"} changed outside the agent and would be overwritten: ${shown}. Rewind with force to overwrite them (the rewind can be undone).`,
    { details: { paths } },
  );
}

/**
 * A rewind waits for no turn: refused while one runs here or in another process (another bridge of
 * the deployment, `worldline acp`, as the session's log shows it), whose writes would land on the
 * rewritten history. The log must be open (and caught up) first.
 */
function refuseWhileRunning(core: CheckpointCore, sessionId: string): void {
  if (core.history.isRunning(sessionId) || core.deps.log.runningElsewhere(sessionId)) {
    throw new WorldlineError(
      "session:busy",
      "A turn is running in this session; cancel it or wait for it before rewinding.",
    );
  }
}

async function rewindRecord(core: CheckpointCore, checkpointId: string): Promise<RewindRecord | undefined> {
  const value = await store.getSetting(core.deps.db, REWIND_RECORD + checkpointId);
  return value && typeof value === "object" ? (value as RewindRecord) : undefined;
}

/** Makes the persisted history equal `records`: a truncation when they are a prefix of it. */
async function replaceHistory(
  db: store.Db,
  sessionId: string,
  current: { data: string }[],
  records: SavedEntry[],
): Promise<void> {
  const isPrefix = records.length <= current.length && records.every((record, i) => record.data === current[i].data);
  if (isPrefix) {
    await store.truncateHistory(db, sessionId, records.length);
    return;
  }
  await store.truncateHistory(db, sessionId, 0);
  await store.appendHistory(
    db,
    sessionId,
    records.map((record, position) => ({ position, kind: record.kind, data: record.data })),
  );
}
