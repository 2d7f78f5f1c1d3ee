import type { CheckpointDiff, CheckpointSettings, CheckpointView, ForkResult, RewindResult } from "../protocol";
import { CheckpointCore, type CheckpointServiceDeps, type HistoryHost, type StepCheckpointRequest } from "./core.ts";
import { fork, type ForkRequest } from "./fork.ts";
import type { ReviewActionBody, ReviewBase, ReviewChanges, ReviewRevertResult } from "../protocol";
import { acceptChange, reviewChanges, revertChange } from "./review.ts";
import { checkpointSettings, diffCheckpoint, listCheckpoints, updateCheckpointSettings } from "./timeline.ts";
import { revertFilesForDmail, rewind, undoRewind, undoTurn, type RewindRequest } from "./rewind.ts";

/**
 * Checkpoints for the bridge: implements the agent loop's CheckpointPort (`create`, `revertTo`)
 * and the operations behind /api/v1/sessions/:id/{checkpoints,rewind,fork}.
 *
 * Undo: every rewind first records a `rewind` checkpoint (the workspace and whole history as
 * they were); `undoRewind` (POST …/rewind/undo) rewinds to the latest of those, and rewinding
 * to any `rewind` checkpoint by id does the same. `undoTurn` is `/undo`: back to the start of
 * the last turn.
 */
export class CheckpointService {
  private readonly core: CheckpointCore;

  constructor(deps: CheckpointServiceDeps) {
    this.core = new CheckpointCore(deps);
  }

  /** The runtime is built with this service as its port; attach it afterwards. */
  attach(host: HistoryHost): void {
    this.core.attach(host);
  }

  /** Port: a checkpoint at the start of a turn or step (or for compaction/D-Mail). */
  create(input: StepCheckpointRequest): Promise<{ id: string; number: number }> {
    return this.core.create(input);
  }

  /** Port: resolves once every step checkpoint so far has its snapshot (tools wait for it). */
  captured(sessionId: string): Promise<void> {
    return this.core.captured(sessionId);
  }

  /** Frees the per-session bookkeeping once its checkpoint work is done (deleted or idle session). */
  forgetSession(sessionId: string): Promise<void> {
    return this.core.forgetSession(sessionId);
  }

  /** Sessions with bookkeeping held (tests bound it). */
  heldSessions(): number {
    return this.core.heldSessions();
  }

  /** Port: the turn is done; records its `turn_end` checkpoint (awaited before `turn.completed`). */
  turnEnded(sessionId: string): Promise<void> {
    return this.core.turnEnded(sessionId);
  }

  /** Port: a D-Mail went back to `checkpointId`; restores its files when the session allows it. */
  revertTo(input: { sessionId: string; checkpointId: string }): Promise<boolean> {
    return revertFilesForDmail(this.core, input.sessionId, input.checkpointId);
  }

  list(sessionId: string): Promise<CheckpointView[]> {
    return listCheckpoints(this.core, sessionId);
  }

  diff(sessionId: string, checkpoint: string | number): Promise<CheckpointDiff> {
    return diffCheckpoint(this.core, sessionId, checkpoint);
  }

  rewind(sessionId: string, request: RewindRequest): Promise<RewindResult> {
    return rewind(this.core, sessionId, request);
  }

  undoRewind(sessionId: string, options: { force?: boolean } = {}): Promise<RewindResult> {
    return undoRewind(this.core, sessionId, options.force ?? false);
  }

  undoTurn(sessionId: string, options: { force?: boolean } = {}): Promise<RewindResult> {
    return undoTurn(this.core, sessionId, options.force ?? false);
  }

  /** The Changes view: files and hunks changed since `base` (`start` or a checkpoint), with what was accepted. */
  changes(sessionId: string, base: ReviewBase): Promise<ReviewChanges> {
    return reviewChanges(this.core, sessionId, base);
  }

  /** Accepts a hunk, a file or (no path) every file against `base`: they leave the pending list. */
  acceptChange(sessionId: string, body: ReviewActionBody & { base: ReviewBase }): Promise<ReviewChanges> {
    return acceptChange(this.core, sessionId, body);
  }

  /** Reverts a hunk or a file to its `base` version; undoable like a rewind (POST …/rewind/undo). */
  revertChange(sessionId: string, body: ReviewActionBody & { base: ReviewBase }): Promise<ReviewRevertResult> {
    return revertChange(this.core, sessionId, body);
  }

  fork(sessionId: string, request: ForkRequest): Promise<ForkResult> {
    return fork(this.core, sessionId, request);
  }

  settings(sessionId: string): Promise<CheckpointSettings> {
    return checkpointSettings(this.core, sessionId);
  }

  updateSettings(sessionId: string, patch: Partial<CheckpointSettings>): Promise<CheckpointSettings> {
    return updateCheckpointSettings(this.core, sessionId, patch);
  }

  /** Waits for pending checkpoint work of a session (tests, shutdown). */
  settled(sessionId: string): Promise<void> {
    return this.core.settled(sessionId);
  }

  /** Waits for pending checkpoint work of all sessions (shutdown: rows and snapshots still being written). */
  settledAll(): Promise<void> {
    return this.core.settledAll();
  }
}
