import { randomUUID } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { WorldlineError } from "../errors.ts";
import { applyPlan, checkPlan, planApply } from "./apply.ts";
import { changedPaths, rawChanges, treeChanges, treePatch } from "./changes.ts";
import {
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  EMPTY_TREE,
  GC_EVERY_SNAPSHOTS,
  SKIPPED_TRAILER,
  SNAPSHOT_REF,
} from "./constants.ts";
import { git, gitText, type GitTarget } from "./git.ts";
import {
  defaultHome,
  ensureEmptyBlob,
  excludeFileText,
  prepareShadowRepo,
  resolveWorkspace,
  shadowGitDir,
} from "./layout.ts";
import { Fingerprint, FINGERPRINT_MAX_ENTRIES, indexEntryCount, racyWindowMs, walkWorkTree } from "./fingerprint.ts";
import { serialize } from "./queue.ts";
import { repositoryAt, seedFromRepository } from "./seed.ts";
import { readRef } from "./refs.ts";
import { stageWorkTree, type StageLimits, type StageResult, type TreeCache } from "./stage.ts";
import type {
  DiffResult,
  MaterializeResult,
  RestoreOptions,
  RestoreResult,
  RevertSpec,
  ShadowRepoOptions,
  SkippedPath,
  SnapshotOptions,
  SnapshotRepo,
  SnapshotResult,
} from "./types.ts";
import { forkFolder, readNow, revertFile } from "./workspace-files.ts";

/** Commits whose tree and skipped list stay in memory; the newest matter (the head and its parent). */
const KNOWN_COMMITS = 64;

/** Snapshot ids are full or abbreviated commit hashes; anything else is refused before it reaches git. */
const SNAPSHOT_ID = /^[0-9a-f]{7,64}$/i;

interface Head {
  commit: string;
  tree: string;
  skipped: SkippedPath[];
}

function parseSkipped(message: string): SkippedPath[] {
  const line = message.split("\n").find((text) => text.startsWith(SKIPPED_TRAILER));
  if (!line) return [];
  return JSON.parse(line.slice(SKIPPED_TRAILER.length)) as SkippedPath[];
}

const sameSkipped = (a: readonly SkippedPath[], b: readonly SkippedPath[]) =>
  a.length === b.length && a.every((entry, i) => entry.path === b[i].path && entry.reason === b[i].reason);

/**
 * Snapshots of one workspace, kept in a shadow git repository under
 * `<home>/snapshots/<hash>/` that shares nothing with the workspace's own `.git`.
 * Operations on one workspace run one at a time (see queue.ts). Create with `openShadowRepo`.
 */
export class ShadowRepo implements SnapshotRepo {
  readonly workspace: string;
  readonly gitDir: string;
  /** The data directory the repository is under (forks go there too). */
  private readonly home: string;
  private readonly target: GitTarget;
  private readonly limits: StageLimits;
  private readonly emptyBlob: string;
  private rescanIgnored: boolean;
  private snapshotsSinceGc = 0;
  /** Tree and skipped paths of commits seen (see head). */
  private readonly commits = new Map<string, Omit<Head, "commit">>();
  /** The tree last written from the workspace's index (stage.ts writeTree). */
  private readonly treeCache: TreeCache = {};
  /** The work tree's stat data at the last snapshot (fingerprint.ts); undefined when git must look. */
  private fingerprint: Fingerprint | undefined;
  /** How recent a change is too recent to trust its stats (fingerprint.ts RACY_MS). */
  private racyMs: number | undefined;

  constructor(init: {
    target: GitTarget;
    home: string;
    limits: StageLimits;
    emptyBlob: string;
    rescanIgnored: boolean;
  }) {
    this.target = init.target;
    this.home = init.home;
    this.workspace = init.target.workTree;
    this.gitDir = init.target.gitDir;
    this.limits = init.limits;
    this.emptyBlob = init.emptyBlob;
    this.rescanIgnored = init.rescanIgnored;
  }

  /** Captures the workspace. Reuses the previous commit when nothing changed. */
  snapshot(options: SnapshotOptions = {}): Promise<SnapshotResult> {
    return serialize(this.gitDir, () => this.snapshotNow(options.message ?? "snapshot", options.changes ?? true));
  }

  /** The latest snapshot, if any. */
  latest(): Promise<string | undefined> {
    return serialize(this.gitDir, async () => (await this.head())?.commit);
  }

  /** Changes and patch from snapshot `from` to snapshot `to`, or to the working tree now. */
  diff(from: string, to?: string): Promise<DiffResult> {
    return serialize(this.gitDir, async () => {
      const fromCommit = await this.resolveSnapshot(from);
      const staged = to === undefined ? await this.stage(this.target) : undefined;
      const toTree = staged?.tree ?? (await this.resolveSnapshot(to as string));
      const [files, { patch, truncated }] = await Promise.all([
        treeChanges(this.target, fromCommit, toTree),
        treePatch(this.target, fromCommit, toTree),
      ]);
      return { files, patch, truncated, skipped: staged?.skipped ?? [] };
    });
  }

  /** Paths whose current content differs from snapshot `commit`. */
  changedSince(commit: string): Promise<string[]> {
    return serialize(this.gitDir, async () => {
      const resolved = await this.resolveSnapshot(commit);
      const { tree } = await this.stage(this.target);
      return changedPaths(this.target, resolved, tree);
    });
  }

  /**
   * Makes the workspace equal to snapshot `target`. Takes a snapshot first (returned as
   * `before`, so the restore can be undone). With `baseline`, refuses with
   * `checkpoint:conflict` — writing nothing — when a path the restore would change also
   * changed since `baseline`, i.e. outside the agent; `force` overwrites those.
   */
  restore(target: string, options: RestoreOptions = {}): Promise<RestoreResult> {
    return serialize(this.gitDir, async () => {
      const targetCommit = await this.resolveSnapshot(target);
      const baseline = options.baseline === undefined ? undefined : await this.resolveSnapshot(options.baseline);
      const before =
        options.current === undefined
          ? await this.snapshotNow(`before restore to ${targetCommit.slice(0, 12)}`, false)
          : await this.snapshotOf(options.current);
      const targetSkipped = await this.skippedIn(targetCommit);
      const protectedPaths = new Set([...targetSkipped, ...before.skipped].map((entry) => entry.path));
      const plan = planApply(await rawChanges(this.target, before.commit, targetCommit), protectedPaths);

      if (baseline !== undefined && !options.force) {
        const outside = new Set(await changedPaths(this.target, baseline, before.commit));
        const conflicts = [...plan.writes.map((write) => write.path), ...plan.deletes]
          .filter((path) => outside.has(path))
          .sort();
        if (conflicts.length > 0) {
          throw new WorldlineError(
            "checkpoint:conflict",
            `${conflicts.length} file${conflicts.length === 1 ? " was" : "s were"} changed outside the agent since the last checkpoint: ${conflicts.join(", ")}`,
            { details: { paths: conflicts } },
          );
        }
      }
      await checkPlan(this.workspace, plan);
      const { written, deleted } = await applyPlan(this.target, plan);
      this.fingerprint = undefined; // the stats would tell too; the next snapshot asks git anyway
      // Paths skipped now were never captured, so whatever the target says about them was not applied.
      const untouched = [...new Set([...plan.untouched, ...before.skipped.map((entry) => entry.path)])].sort();
      const message = options.message ?? `restored ${targetCommit.slice(0, 12)}`;
      const after =
        protectedPaths.size === 0 ? await this.recordRestored(before.commit, targetCommit, message) : undefined;
      return { before: before.commit, written, deleted, untouched, ...(after ? { after } : {}) };
    });
  }

  /**
   * Makes folder `destDir` (created if missing) hold snapshot `target`, e.g. for a fork.
   * Files there that the snapshot lacks are deleted unless ignored; ignored files stay.
   */
  materialize(target: string, destDir: string): Promise<MaterializeResult> {
    return serialize(this.gitDir, async () => {
      const targetCommit = await this.resolveSnapshot(target);
      await mkdir(resolve(destDir), { recursive: true });
      const workTree = await resolveWorkspace(destDir);
      if (workTree === this.workspace) {
        throw new WorldlineError(
          "checkpoint:bad_request",
          "materialize into the workspace itself; use restore instead",
        );
      }
      // A throwaway index: the destination's state must not disturb the workspace's.
      const destTarget: GitTarget = {
        ...this.target,
        workTree,
        indexFile: join(this.gitDir, `materialize-${randomUUID()}.index`),
      };
      try {
        const staged = await stageWorkTree(destTarget, this.emptyBlob, { ...this.limits, rescanIgnored: false });
        const targetSkipped = await this.skippedIn(targetCommit);
        const protectedPaths = new Set([...targetSkipped, ...staged.skipped].map((entry) => entry.path));
        const plan = planApply(await rawChanges(destTarget, staged.tree, targetCommit), protectedPaths);
        await checkPlan(workTree, plan);
        return await applyPlan(destTarget, plan);
      } finally {
        await rm(destTarget.indexFile, { force: true });
      }
    });
  }

  /** The content of `path` in snapshot `commit`, or undefined when it has no such file (the Changes view's base side). */
  fileAt(commit: string, path: string): Promise<Buffer | undefined> {
    return serialize(this.gitDir, async () => {
      const resolved = await this.resolveSnapshot(commit);
      const { stdout, code } = await git(this.target, ["cat-file", "blob", `${resolved}:${path}`], { okCodes: [128] });
      return code === 0 ? stdout : undefined;
    });
  }

  get key(): string {
    return this.workspace;
  }

  readNow(path: string): Promise<Buffer | undefined> {
    return readNow(this.workspace, path);
  }

  revert(spec: RevertSpec, options?: { dryRun?: boolean }): Promise<MaterializeResult> {
    return revertFile(this.workspace, spec, options);
  }

  fork(target: string, options: { name: string; worktree: boolean }): Promise<string> {
    return forkFolder(this.workspace, this.home, options, (dest) => this.materialize(target, dest));
  }

  /** Paths snapshot `commit` could not capture. */
  async skippedIn(commit: string): Promise<SkippedPath[]> {
    return parseSkipped(await gitText(this.target, ["cat-file", "commit", commit]));
  }

  private async snapshotNow(message: string, listChanges: boolean): Promise<SnapshotResult> {
    const known = await this.head();
    const fingerprint = this.fingerprint;
    this.fingerprint = undefined;
    if (
      known &&
      fingerprint &&
      !this.rescanIgnored &&
      fingerprint.tree === known.tree &&
      known.skipped.length === 0 &&
      (await fingerprint.unchanged())
    ) {
      this.fingerprint = fingerprint;
      return { commit: known.commit, changed: [], skipped: [] };
    }
    // Stats first, then git: whatever changes in between shows up as a change next time. A tree
    // whose index is already too big is not walked at all (reading its header is one small read).
    this.racyMs ??= await racyWindowMs(this.workspace);
    const walk =
      indexEntryCount(this.target.indexFile) <= FINGERPRINT_MAX_ENTRIES
        ? await walkWorkTree(this.workspace, this.racyMs)
        : undefined;
    const fingerprinting = walk !== undefined;
    const staged = await this.stage(this.target, fingerprinting);
    if (fingerprinting && staged.ignored)
      this.fingerprint = Fingerprint.confirm(this.workspace, walk, { ...staged, ignored: staged.ignored });
    const head = await this.head();
    if (head && head.tree === staged.tree && sameSkipped(head.skipped, staged.skipped)) {
      return { commit: head.commit, changed: [], skipped: staged.skipped };
    }
    const body = staged.skipped.length > 0 ? `\n\n${SKIPPED_TRAILER} ${JSON.stringify(staged.skipped)}` : "";
    const parentArgs = head ? ["-p", head.commit] : [];
    const commit = await gitText(this.target, ["commit-tree", staged.tree, ...parentArgs, "-F", "-"], {
      input: `${message}${body}\n`,
    });
    // The old value makes a concurrent writer from another process fail loudly instead of dropping history.
    await git(this.target, ["update-ref", SNAPSHOT_REF, commit, head?.commit ?? ""]);
    this.remember(commit, { tree: staged.tree, skipped: staged.skipped });
    const changed = listChanges ? await treeChanges(this.target, head?.commit ?? EMPTY_TREE, commit) : [];
    await this.maybeCollectGarbage();
    return { commit, changed, skipped: staged.skipped };
  }

  /**
   * The snapshot after a restore that left nothing alone: the work tree now holds the target's
   * tree, so it is committed as it is instead of asking `git status` of every file again (a
   * quarter second on 25,000 files). The shadow index still describes the files as they were: the
   * next snapshot re-hashes the restored ones (their stat changed) and finds this tree.
   */
  private async recordRestored(before: string, target: string, message: string): Promise<string | undefined> {
    const head = await this.head();
    if (head?.commit !== before) return undefined; // moved by another process meanwhile: the caller snapshots
    const tree = await gitText(this.target, ["rev-parse", `${target}^{tree}`]);
    if (tree === head.tree) return before;
    const commit = await gitText(this.target, ["commit-tree", tree, "-p", before, "-F", "-"], {
      input: `${message}\n`,
    });
    await git(this.target, ["update-ref", SNAPSHOT_REF, commit, before]);
    this.remember(commit, { tree, skipped: [] });
    return commit;
  }

  private async stage(target: GitTarget, listIgnored = false): Promise<StageResult> {
    await resolveWorkspace(target.workTree); // a clear error for a workspace deleted since open, not a git one
    const staged = await stageWorkTree(target, this.emptyBlob, {
      ...this.limits,
      rescanIgnored: this.rescanIgnored,
      treeCache: target === this.target ? this.treeCache : undefined,
      listIgnored,
    });
    this.rescanIgnored = false;
    return staged;
  }

  /**
   * The latest snapshot: the ref read from its file, the commit's tree and skipped list from
   * memory (a commit never changes), so a step where nothing changed asks git nothing here.
   */
  private async head(): Promise<Head | undefined> {
    const commit = readRef(this.gitDir, SNAPSHOT_REF);
    return commit ? { commit, ...(await this.known(commit)) } : undefined;
  }

  /** A snapshot's tree and what it left out, remembered. */
  private async known(commit: string): Promise<Omit<Head, "commit">> {
    let known = this.commits.get(commit);
    if (!known) {
      const text = await gitText(this.target, ["cat-file", "commit", commit]);
      const tree = /^tree ([0-9a-f]+)$/m.exec(text)?.[1];
      if (!tree) throw new WorldlineError("checkpoint:corrupt", `snapshot ${commit} has no tree`);
      known = { tree, skipped: parseSkipped(text.slice(text.indexOf("\n\n") + 2)) };
      this.remember(commit, known);
    }
    return known;
  }

  /** A snapshot the caller took of the work tree, as `snapshotNow` would have answered. */
  private async snapshotOf(id: string): Promise<SnapshotResult> {
    const commit = await this.resolveSnapshot(id);
    return { commit, changed: [], skipped: (await this.known(commit)).skipped };
  }

  private remember(commit: string, known: Omit<Head, "commit">): void {
    if (this.commits.size >= KNOWN_COMMITS) this.commits.delete(this.commits.keys().next().value as string);
    this.commits.set(commit, known);
  }

  private async resolveSnapshot(id: string): Promise<string> {
    if (!SNAPSHOT_ID.test(id))
      throw new WorldlineError("checkpoint:not_found", `not a snapshot id: ${JSON.stringify(id)}`);
    const { stdout, code } = await git(this.target, ["rev-parse", "--verify", "--quiet", `${id}^{commit}`], {
      okCodes: [1, 128],
    });
    if (code !== 0) throw new WorldlineError("checkpoint:not_found", `no snapshot ${id} in this workspace`);
    return stdout.toString("utf8").trim();
  }

  private async maybeCollectGarbage(): Promise<void> {
    if (++this.snapshotsSinceGc < GC_EVERY_SNAPSHOTS) return;
    this.snapshotsSinceGc = 0;
    // Detaches by default, so a snapshot never waits for a repack; git locks against concurrent gc itself.
    await git(this.target, ["gc", "--auto", "--quiet"]);
  }
}

/** Opens (creating on first use) the shadow repository of `workspace`. */
export async function openShadowRepo(workspace: string, options: ShadowRepoOptions = {}): Promise<ShadowRepo> {
  const workTree = await resolveWorkspace(workspace);
  const home = resolve(options.home ?? defaultHome());
  const gitDir = shadowGitDir(home, workTree);
  const target: GitTarget = {
    gitDir,
    workTree,
    indexFile: join(gitDir, "index"),
    emptyDir: join(gitDir, "worldline-empty"),
  };
  const limits: StageLimits = {
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    maxSnapshotBytes: options.maxSnapshotBytes ?? DEFAULT_MAX_SNAPSHOT_BYTES,
  };
  return serialize(gitDir, async () => {
    const { excludeChanged, fresh } = await prepareShadowRepo(
      target,
      excludeFileText(workTree, home, options.extraIgnores ?? []),
    );
    // A borrowed index may hold paths our ignore rules exclude: the first snapshot drops them.
    const repository = fresh ? await repositoryAt(workTree) : undefined;
    const seeded = repository !== undefined && (await seedFromRepository(target, repository));
    const emptyBlob = await ensureEmptyBlob(target);
    return new ShadowRepo({ target, home, limits, emptyBlob, rescanIgnored: excludeChanged || seeded });
  });
}
