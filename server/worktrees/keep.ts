import { WorldlineError } from "../errors";
import type { UnmergedDetails } from "../protocol";
import * as store from "../store";
import { readdWorktree, removeWorktree } from "./create";
import { describeLoss, wouldLose } from "./lost";
import type { SessionWorktree, WorktreeCore, WorktreeRow } from "./service";

/**
 * Never losing a worktree: archiving refuses while the worktree holds work found
 * nowhere else (`worktree:unmerged`, with exactly what), unless forced; then takes a snapshot of
 * its files (server/checkpoints' shadow repository, untracked files included) and removes the
 * folder, keeping the branch. Restore puts the folder back on the branch and the snapshot over it.
 */
export class Keeping {
  constructor(private readonly core: WorktreeCore) {}

  async archive(sessionId: string, input: { force?: boolean }): Promise<{ archived: true; snapshot: string | null }> {
    return this.core.exclusive(sessionId, "worktree:busy", async () => {
      const found = await this.core.of(sessionId);
      if (found.session.archived) throw new WorldlineError("worktree:conflict", "This session is archived already.");
      const snapshot = await this.takeAway(found, input.force ?? false);
      await this.core.deps.sessions.update(sessionId, { archived: true });
      return { archived: true, snapshot };
    });
  }

  async restore(sessionId: string): Promise<{ restored: true; path: string }> {
    return this.core.exclusive(sessionId, "worktree:busy", async () => {
      const { session, row, host } = await this.core.of(sessionId);
      if (!session.archived) throw new WorldlineError("worktree:conflict", "This session is not archived.");
      await readdWorktree(host, row.repo, row.path, row.branch);
      if (row.archiveSnapshot) {
        try {
          const repo = await this.core.snapshots(session);
          await repo.restore(row.archiveSnapshot, { force: true });
        } catch (error) {
          // Half a restore is worse than none: the folder goes again, the branch and snapshot stay for another try.
          await removeWorktree(host, row.repo, row.path);
          throw error;
        }
      }
      await this.core.deps.sessions.update(sessionId, { archived: false });
      await this.core.refreshChanges(sessionId);
      this.core.notice(sessionId, "info", `Restored the worktree at ${row.path} on ${row.branch}.`);
      return { restored: true, path: row.path };
    });
  }

  /** Deleting a session with a worktree: the same refusal as archive; the folder goes, the branch stays. */
  async beforeDelete(sessionId: string, force: boolean): Promise<void> {
    if (!(await this.core.row(sessionId))) return;
    await this.core.exclusive(sessionId, "worktree:busy", async () => {
      const found = await this.core.of(sessionId);
      if (found.session.archived || !(await found.host.stat(found.row.path))) return;
      await this.takeAway(found, force);
    });
  }

  /** Refuses unless forced when work would be lost, snapshots, then removes the folder (the branch stays). */
  private async takeAway({ session, row, host }: SessionWorktree, force: boolean): Promise<string | null> {
    const present = Boolean(await host.stat(row.path));
    if (!present && !force)
      throw new WorldlineError(
        "worktree:missing",
        `The worktree folder ${row.path} was deleted outside Worldline; archive with force to record that (its branch ${row.branch} stays).`,
      );
    if (present && !force) {
      const loss = await wouldLose(host, row);
      if (loss.commits.length > 0 || loss.files.length > 0) throw unmerged(row, loss);
    }
    let snapshot: string | null = null;
    if (present) {
      snapshot = (await (await this.core.snapshots(session)).snapshot({ message: "archive", changes: false })).commit;
      await store.updateWorktree(this.core.deps.db, session.id, { archiveSnapshot: snapshot });
    }
    // Its shells stand in the folder that goes.
    await this.core.deps.terminals.closeSession(session.id);
    await removeWorktree(host, row.repo, row.path);
    return snapshot;
  }
}

function unmerged(row: WorktreeRow, loss: UnmergedDetails): WorldlineError {
  return new WorldlineError(
    "worktree:unmerged",
    `Removing ${row.path} would lose ${describeLoss(loss)}. Merge, push or commit first, or pass force (a snapshot is kept for restore).`,
    { details: loss },
  );
}
