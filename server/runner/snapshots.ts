import { openShadowRepo, type ShadowRepo } from "../checkpoints";
import type { RunnerOperation } from "../protocol";

type SnapshotOperation = Extract<RunnerOperation, { op: `snapshots.${string}` }>;

/**
 * The checkpoints' shadow repositories of the workspaces this runner serves, in its own data
 * directory (`<WORLDLINE_HOME>/snapshots/…`), as a bridge keeps those of its own machine; forks
 * go to `<WORLDLINE_HOME>/forks/`, which the runner serves too (server/runner/guard.ts).
 */
export class RunnerSnapshots {
  private readonly repos = new Map<string, Promise<ShadowRepo>>();

  constructor(private readonly home: string) {}

  /** `workspace` is already a real folder under a root (the worker checked it). */
  async perform(operation: SnapshotOperation, workspace: string): Promise<unknown> {
    const repo = await this.repo(workspace);
    switch (operation.op) {
      case "snapshots.snapshot":
        return repo.snapshot({ message: operation.message, changes: operation.changes });
      case "snapshots.diff":
        return repo.diff(operation.from, operation.to);
      case "snapshots.changedSince":
        return repo.changedSince(operation.commit);
      case "snapshots.restore":
        return repo.restore(operation.target, {
          baseline: operation.baseline,
          force: operation.force,
          message: operation.message,
          current: operation.current,
        });
      case "snapshots.fileAt":
        return (await repo.fileAt(operation.commit, operation.path)) ?? null;
      case "snapshots.readNow":
        return (await repo.readNow(operation.path)) ?? null;
      case "snapshots.revert":
        return repo.revert(operation.spec, { dryRun: operation.dryRun });
      case "snapshots.fork":
        return { workspace: await repo.fork(operation.target, { name: operation.name, worktree: operation.worktree }) };
    }
  }

  private repo(workspace: string): Promise<ShadowRepo> {
    let repo = this.repos.get(workspace);
    if (!repo) {
      repo = openShadowRepo(workspace, { home: this.home });
      repo.catch(() => this.repos.delete(workspace));
      this.repos.set(workspace, repo);
    }
    return repo;
  }
}
