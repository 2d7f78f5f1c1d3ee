import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, realpath } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { EventType, ForkResult, SessionEvent } from "../protocol";
import { errorMessage, WorldlineError } from "../errors";
import * as store from "../store";
import { historyAt } from "./rewind.ts";
import { noSnapshot, type CheckpointCore } from "./core.ts";

const run = promisify(execFile);

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
 * workspace is in a git repository. The source session and its workspace are not touched.
 */
export async function fork(core: CheckpointCore, sessionId: string, request: ForkRequest): Promise<ForkResult> {
  const { db, log, sessions, home } = core.deps;
  const source = await sessions.get(sessionId);
  await core.settled(sessionId);
  const target = await core.find(sessionId, request.checkpoint);
  if (!target.snapshot) throw noSnapshot(target);
  const repo = await core.repo(source.workspace.path);

  await mkdir(path.join(home, "forks"), { recursive: true });
  const dir = path.join(home, "forks", `${source.id.slice(-8)}-${target.number}-${randomUUID().slice(0, 8)}`);
  let workspace = dir;
  if (request.worktree) workspace = await addWorktree(source.workspace.path, dir);
  await repo.materialize(target.snapshot, workspace);
  workspace = await realpath(workspace);

  const forked = await sessions.create({
    workspace,
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

/** A detached worktree of the workspace's repository at `dir`; returns the workspace's place inside it. */
async function addWorktree(workspace: string, dir: string): Promise<string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("GIT_")),
  ) as NodeJS.ProcessEnv;
  let top: string;
  try {
    top = (await run("git", ["-C", workspace, "rev-parse", "--show-toplevel"], { env })).stdout.trim();
  } catch {
    throw new WorldlineError(
      "checkpoint:invalid",
      "The workspace is not in a git repository; fork into a folder instead (worktree: false).",
    );
  }
  try {
    await run("git", ["-C", top, "worktree", "add", "--detach", dir, "HEAD"], { env });
  } catch (error) {
    throw new WorldlineError("checkpoint:git_failed", `git worktree add failed: ${errorMessage(error)}`);
  }
  return path.join(dir, path.relative(await realpath(top), workspace));
}
