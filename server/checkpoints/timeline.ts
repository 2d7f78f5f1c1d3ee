import type { CheckpointDiff, CheckpointFile, CheckpointSettings, CheckpointView } from "../protocol";
import * as store from "../store";
import {
  DMAIL_RESTORES_FILES_SETTING,
  noSnapshot,
  storedFiles,
  type CheckpointCore,
  type CheckpointRow,
  type StoredFileChange,
} from "./core.ts";

/** What the timeline shows of a session's checkpoints, and the session's checkpoint settings. */

export async function listCheckpoints(core: CheckpointCore, sessionId: string): Promise<CheckpointView[]> {
  await core.deps.sessions.get(sessionId);
  await core.settled(sessionId);
  return (await store.listCheckpoints(core.deps.db, sessionId)).map(toView);
}

/** The diff from a checkpoint to the workspace now: what a files rewind would undo. */
export async function diffCheckpoint(
  core: CheckpointCore,
  sessionId: string,
  ref: string | number,
): Promise<CheckpointDiff> {
  const session = await core.deps.sessions.get(sessionId);
  await core.settled(sessionId); // a checkpoint announced during a turn may still be writing its row
  const row = await core.find(sessionId, ref);
  if (!row.snapshot) throw noSnapshot(row);
  const result = await (await core.repo(sessionId, session.workspace.path)).diff(row.snapshot);
  return {
    checkpoint: row.id,
    files: result.files.map(toWireFile),
    patch: result.patch,
    truncated: result.truncated,
    skipped: result.skipped,
  };
}

export async function checkpointSettings(core: CheckpointCore, sessionId: string): Promise<CheckpointSettings> {
  await core.deps.sessions.get(sessionId);
  const own = await store.getSetting(core.deps.db, `${DMAIL_RESTORES_FILES_SETTING}:${sessionId}`);
  const global = await store.getSetting(core.deps.db, DMAIL_RESTORES_FILES_SETTING);
  return { dmail_restores_files: typeof own === "boolean" ? own : global === true };
}

export async function updateCheckpointSettings(
  core: CheckpointCore,
  sessionId: string,
  patch: Partial<CheckpointSettings>,
): Promise<CheckpointSettings> {
  await core.deps.sessions.get(sessionId);
  if (patch.dmail_restores_files !== undefined) {
    const key = `${DMAIL_RESTORES_FILES_SETTING}:${sessionId}`;
    await store.putSetting(core.deps.db, key, patch.dmail_restores_files);
  }
  return checkpointSettings(core, sessionId);
}

function toWireFile(change: StoredFileChange): CheckpointFile {
  return {
    path: change.path,
    status: change.status,
    additions: change.additions,
    deletions: change.deletions,
    ...(change.oldPath ? { old_path: change.oldPath } : {}),
    ...(change.binary ? { binary: true } : {}),
    ...(change.outside ? { outside: true } : {}),
  };
}

function toView(row: CheckpointRow): CheckpointView {
  return {
    id: row.id,
    number: row.number,
    turn: row.turn,
    step: row.step,
    reason: row.reason,
    created_at: row.createdAt.toISOString(),
    history_position: row.historyPosition,
    has_snapshot: row.snapshot !== null,
    note: row.note,
    files: storedFiles(row).map(toWireFile),
  };
}
