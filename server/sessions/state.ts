import type { ChangeStat, SessionState, WorktreeInfo } from "../protocol";
import * as store from "../store";

/** What a session's JSON and its board card add to its row. */
export interface FleetView {
  worktree: WorktreeInfo | null;
  state: SessionState;
  changes: ChangeStat | null;
  /** When the running turn started; null when none runs. */
  turnStartedAt: string | null;
}

/** Turn statuses that mean the last turn did not finish its work. */
const FAILED_TURNS = new Set(["error", "interrupted"]);

/**
 * Worktree, state and changes of many sessions in three queries. `state`:
 * archived, then needs_you (a request waits on a person), running, failed (the last turn ended in
 * error or was interrupted), review (idle with changes not yet merged), idle.
 */
export async function fleetViews(db: store.Db, sessions: store.SessionRow[]): Promise<Map<string, FleetView>> {
  const ids = sessions.map((session) => session.id);
  const [worktrees, activity] = await Promise.all([store.worktreesOf(db, ids), store.sessionActivity(db, ids)]);
  const views = new Map<string, FleetView>();
  for (const session of sessions) {
    const row = worktrees.get(session.id);
    const changes = row ? { files: row.changedFiles, additions: row.additions, deletions: row.deletions } : null;
    const turn = activity.lastTurn.get(session.id);
    const running = session.status === "running" || turn?.status === "running" || turn?.status === "waiting";
    views.set(session.id, {
      worktree: row ? { path: row.path, branch: row.branch, base: row.base, repo: row.repo } : null,
      changes,
      turnStartedAt: running && turn ? turn.startedAt.toISOString() : null,
      state: stateOf({
        archived: session.archived,
        waiting: activity.waiting.has(session.id) || turn?.status === "waiting",
        running,
        failed: turn !== undefined && FAILED_TURNS.has(turn.status),
        changed: (changes?.files ?? 0) > 0,
      }),
    });
  }
  return views;
}

function stateOf(facts: {
  archived: boolean;
  waiting: boolean;
  running: boolean;
  failed: boolean;
  changed: boolean;
}): SessionState {
  if (facts.archived) return "archived";
  if (facts.waiting) return "needs_you";
  if (facts.running) return "running";
  if (facts.failed) return "failed";
  if (facts.changed) return "review";
  return "idle";
}
