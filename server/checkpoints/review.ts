import { createHash } from "node:crypto";
import type { ReviewActionBody, ReviewBase, ReviewChanges, ReviewFile, ReviewRevertResult } from "../protocol";
import { lineHunks, revertHunk, type LineHunk } from "../diff";
import { WorldlineError } from "../errors";
import * as store from "../store";
import { noSnapshot, type CheckpointCore, type CheckpointRow } from "./core.ts";
import { recordFilesUndoPoint } from "./rewind.ts";
import type { FileChange, SnapshotRepo } from "./types.ts";

/**
 * The Changes view: what the workspace looks like now against a base checkpoint (the
 * session's start or any checkpoint), per file and per hunk, with accept and revert.
 *
 * - **Revert** (a hunk or a file) writes the base version back. It is a change like a rewind:
 *   an undo point (`rewind` checkpoint) first, so POST …/rewind/undo brings it back; then the
 *   agent's baseline moves to the result, so a later rewind does not take the revert for an
 *   edit made outside the agent; a `review.updated` event tells every tab.
 * - **Accept** records that the user is satisfied, per base checkpoint: a hunk by its id (a
 *   hash of its lines), a file by a hash of its content now. Accepted items leave the pending
 *   count; a file accepted as a whole comes back when its content changes again. Nothing on disk changes.
 */

/** Larger files are reviewed as a whole (no contents, no hunks): the merge view and the diff stay quick. */
const MAX_REVIEW_BYTES = 512 * 1024;
/** Setting key prefix: per session, base checkpoint id → path → what was accepted. */
const ACCEPTED_SETTING = "review.accepted:";

interface AcceptedFile {
  /** Hash of the file's content when it was accepted as a whole. */
  file?: string;
  hunks: string[];
}
type AcceptedByBase = Record<string, Record<string, AcceptedFile>>;

interface FileState {
  change: FileChange;
  binary: boolean;
  tooLarge: boolean;
  old: Buffer | undefined;
  now: Buffer | undefined;
  hunks: LineHunk[];
  hash: string;
}

export async function reviewChanges(core: CheckpointCore, sessionId: string, ref: ReviewBase): Promise<ReviewChanges> {
  const { base, repo } = await open(core, sessionId, ref);
  const diff = await repo.diff(base.snapshot as string);
  const accepted = (await readAccepted(core, sessionId))[base.id] ?? {};
  const states = await Promise.all(diff.files.map((change) => fileState(repo, base, change)));
  const files = states.map((state) => toWire(state, accepted[state.change.path]));
  return {
    base: { id: base.id, number: base.number, turn: base.turn, reason: base.reason },
    files,
    pending: files.filter((file) => !file.accepted).length,
    skipped: diff.skipped,
  };
}

export async function acceptChange(
  core: CheckpointCore,
  sessionId: string,
  body: Required<Pick<ReviewActionBody, "base">> & ReviewActionBody,
): Promise<ReviewChanges> {
  const { base, repo } = await open(core, sessionId, body.base);
  const diff = await repo.diff(base.snapshot as string);
  const targets = body.path ? diff.files.filter((change) => change.path === body.path) : diff.files;
  if (body.path && targets.length === 0) throw notChanged(body.path);
  const all = await readAccepted(core, sessionId);
  const forBase = (all[base.id] ??= {});
  for (const change of targets) {
    const state = await fileState(repo, base, change);
    const entry = (forBase[change.path] ??= { hunks: [] });
    if (body.hunk) {
      if (!state.hunks.some((hunk) => hunk.id === body.hunk)) throw staleHunk(change.path);
      if (!entry.hunks.includes(body.hunk)) entry.hunks.push(body.hunk);
    } else entry.file = state.hash;
  }
  await store.putSetting(core.deps.db, ACCEPTED_SETTING + sessionId, all);
  announce(core, sessionId, { action: "accept", base: base.id, path: body.path ?? null, hunk: body.hunk ?? null });
  return reviewChanges(core, sessionId, base.id);
}

export async function revertChange(
  core: CheckpointCore,
  sessionId: string,
  body: Required<Pick<ReviewActionBody, "base">> & ReviewActionBody,
): Promise<ReviewRevertResult> {
  if (!body.path) throw new WorldlineError("review:invalid", "Say which file to revert (path).");
  if (core.history.isRunning(sessionId)) {
    throw new WorldlineError("session:busy", "A turn is running in this session; cancel it or wait before reverting.");
  }
  const { base, repo } = await open(core, sessionId, body.base);
  const change = (await repo.diff(base.snapshot as string)).files.find((file) => file.path === body.path);
  if (!change) throw notChanged(body.path);
  const state = await fileState(repo, base, change);
  let hunk: LineHunk | undefined;
  if (body.hunk) {
    hunk = state.hunks.find((candidate) => candidate.id === body.hunk);
    if (!hunk) throw staleHunk(change.path);
  }
  const spec = {
    path: change.path,
    ...(change.oldPath ? { oldPath: change.oldPath } : {}),
    status: change.status,
    ...(hunk ? { hunkText: revertHunk((state.now ?? Buffer.alloc(0)).toString("utf8"), hunk) } : {}),
    ...(!hunk && state.old ? { base: state.old } : {}),
  };
  // Checked (symlinks on the way) before the undo point, so a refused revert leaves no trace.
  await repo.revert(spec, { dryRun: true });
  const undoPoint = await recordFilesUndoPoint(core, sessionId);
  const { written, deleted } = await repo.revert(spec);
  // The revert is the user's decision made through Worldline, not an outside edit: the agent's baseline follows it.
  await core.setBaseline(
    repo,
    (await repo.snapshot({ message: `review: revert ${change.path}`, changes: false })).commit,
  );
  announce(core, sessionId, {
    action: "revert",
    base: base.id,
    path: change.path,
    hunk: body.hunk ?? null,
    undoCheckpointId: undoPoint.id,
  });
  return { path: change.path, hunk: body.hunk ?? null, written, deleted, undo_checkpoint: undoPoint.id };
}

async function open(core: CheckpointCore, sessionId: string, ref: ReviewBase) {
  const session = await core.deps.sessions.get(sessionId);
  await core.settled(sessionId);
  const base = await resolveBase(core, sessionId, ref);
  if (!base.snapshot) throw noSnapshot(base);
  return { base, repo: await core.repo(sessionId, session.workspace.path) };
}

/** `start` is the session's first checkpoint with a snapshot: everything the session changed. */
async function resolveBase(core: CheckpointCore, sessionId: string, ref: ReviewBase): Promise<CheckpointRow> {
  if (ref !== "start") return core.find(sessionId, ref);
  const first = (await store.listCheckpoints(core.deps.db, sessionId)).find((row) => row.snapshot);
  if (!first) throw new WorldlineError("checkpoint:not_found", "No checkpoint with a snapshot yet: nothing to review.");
  return first;
}

async function fileState(repo: SnapshotRepo, base: CheckpointRow, change: FileChange) {
  const old =
    change.status === "added" ? undefined : await repo.fileAt(base.snapshot as string, change.oldPath ?? change.path);
  const now = change.status === "deleted" ? undefined : await repo.readNow(change.path);
  const size = Math.max(old?.length ?? 0, now?.length ?? 0);
  const binary = Boolean(change.binary) || [old, now].some((buffer) => buffer?.includes(0));
  const tooLarge = !binary && size > MAX_REVIEW_BYTES;
  const hunks = binary || tooLarge ? [] : lineHunks(old?.toString("utf8") ?? "", now?.toString("utf8") ?? "");
  const hash = createHash("sha256")
    .update(now ?? "\0deleted")
    .digest("hex");
  return { change, binary, tooLarge, old, now, hunks, hash } satisfies FileState;
}

function toWire(state: FileState, accepted: AcceptedFile | undefined): ReviewFile {
  const { change, binary, tooLarge } = state;
  const hunks = state.hunks.map((hunk) => ({
    id: hunk.id,
    // Like unified diff headers: an empty side names the line before it.
    old_start: hunk.oldTo > hunk.oldFrom ? hunk.oldFrom + 1 : hunk.oldFrom,
    old_lines: hunk.oldTo - hunk.oldFrom,
    new_start: hunk.newTo > hunk.newFrom ? hunk.newFrom + 1 : hunk.newFrom,
    new_lines: hunk.newTo - hunk.newFrom,
    old_text: hunk.oldText,
    new_text: hunk.newText,
    accepted: accepted?.hunks.includes(hunk.id) ?? false,
  }));
  const wholeFile = accepted?.file === state.hash;
  const shown = !binary && !tooLarge;
  return {
    path: change.path,
    ...(change.oldPath ? { old_path: change.oldPath } : {}),
    status: change.status,
    additions: change.additions,
    deletions: change.deletions,
    binary,
    too_large: tooLarge,
    old_content: shown && state.old ? state.old.toString("utf8") : null,
    new_content: shown && state.now ? state.now.toString("utf8") : null,
    hunks: wholeFile ? hunks.map((hunk) => ({ ...hunk, accepted: true })) : hunks,
    accepted: wholeFile || (hunks.length > 0 && hunks.every((hunk) => hunk.accepted)),
  };
}

async function readAccepted(core: CheckpointCore, sessionId: string): Promise<AcceptedByBase> {
  const value = await store.getSetting(core.deps.db, ACCEPTED_SETTING + sessionId);
  return value && typeof value === "object" ? (value as AcceptedByBase) : {};
}

function announce(
  core: CheckpointCore,
  sessionId: string,
  payload: {
    action: "accept" | "revert";
    base: string;
    path: string | null;
    hunk: string | null;
    undoCheckpointId?: string;
  },
): void {
  core.deps.log.append(sessionId, { type: "review.updated", payload });
}

function notChanged(path: string): WorldlineError {
  return new WorldlineError("review:not_found", `${path} has no changes against this checkpoint (any more).`);
}

function staleHunk(path: string): WorldlineError {
  return new WorldlineError(
    "review:conflict",
    `That change in ${path} is no longer there (the file changed since); reload the Changes view.`,
  );
}
