import { randomUUID } from "node:crypto";
import type { EventType, ForkResult, SessionEvent } from "../protocol";
import * as store from "../store";
import { historyAt } from "./rewind.ts";
import { noSnapshot, type CheckpointCore } from "./core.ts";

/** Events a fork does not inherit: they describe the source's live state (status, approvals, terminals), not its conversation. */
const NOT_INHERITED = new Set<EventType>([
  "session.updated",
  "approval.requested",
  "approval.decided",
  "terminal.opened",
  "terminal.renamed",
  "terminal.closed",
]);

export interface ForkRequest {
  checkpoint: string | number;
  worktree: boolean;
  title?: string;
}

/**
 * Forks a session at a checkpoint: a new session (parentId, forkCheckpointId) with the history
 * and transcript of that moment, on its own copy of the workspace as it was then — a folder
 * under `<WORLDLINE_HOME>/forks/`, or a new detached `git worktree` there when asked and the
 * workspace is in a git repository. A session on a runner forks there, into the runner's
 * data directory, and the fork runs on that runner too. The source session and its workspace
 * are not touched.
 */
export async function fork(core: CheckpointCore, sessionId: string, request: ForkRequest): Promise<ForkResult> {
  const { db, log, sessions } = core.deps;
  const source = await sessions.get(sessionId);
  await core.settled(sessionId);
  const target = await core.find(sessionId, request.checkpoint);
  if (!target.snapshot) throw noSnapshot(target);
  const repo = await core.repo(sessionId, source.workspace.path);
  const workspace = await repo.fork(target.snapshot, {
    name: `${source.id.slice(-8)}-${target.number}-${randomUUID().slice(0, 8)}`,
    worktree: request.worktree,
  });

  const forked = await sessions.create({
    workspace,
    ...(source.runner ? { runner: source.runner } : {}),
    yolo: source.yolo,
    model: source.model,
    title: request.title ?? `${source.title} (fork at #${target.number})`,
    parentId: source.id,
    forkCheckpointId: target.id,
  });
  const records = await historyAt(core, target);
  await store.appendHistory(
    db,
    forked.id,
    records.map((record, position) => ({ position, kind: record.kind, data: record.data })),
  );
  await copyTranscript(core, source.id, forked.id, target.id);
  log.append(forked.id, {
    type: "notice",
    payload: {
      level: "info",
      text: `Forked from “${source.title}” at checkpoint #${target.number}; this session works in ${workspace}.`,
    },
  });
  await core.serial(forked.id, () =>
    core.record({
      sessionId: forked.id,
      turn: target.turn,
      step: target.step,
      reason: "fork",
      historyPosition: records.length,
    }),
  );
  return { id: forked.id, workspace, worktree: request.worktree };
}

/** Copies the source's events up to the checkpoint, so the fork's transcript shows that moment. */
async function copyTranscript(
  core: CheckpointCore,
  sourceId: string,
  forkId: string,
  checkpointId: string,
): Promise<void> {
  const { log } = core.deps;
  const events = await log.read(sourceId, 0);
  const mark = events.find(
    (event) => event.type === "checkpoint.created" && event.payload.checkpointId === checkpointId,
  );
  if (!mark) return;
  const openTurns = new Set<string>();
  for (const event of events) {
    if (event.seq > mark.seq) break;
    if (NOT_INHERITED.has(event.type)) continue;
    if (event.type === "turn.started") openTurns.add(event.payload.turnId);
    if (event.type === "turn.completed") openTurns.delete(event.payload.turnId);
    log.append(forkId, { type: event.type, payload: event.payload } as SessionEvent);
  }
  // A fork taken mid-turn starts idle: the turn it was cut from ends here.
  for (const turnId of openTurns)
    log.append(forkId, { type: "turn.completed", payload: { turnId, outcome: "cancelled" } });
}
