import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { localHost } from "../host";
import { statOrNull } from "../stat-or-null";
import * as store from "../store";
import { git, gitHostOf, runGit } from "./git";

/** `worldline doctor` runs on the hub's machine: it looks at the worktrees that are on it. */
const here = gitHostOf(localHost);

export interface WorktreeFinding {
  sessionId: string;
  kind: "worktree_vanished" | "worktree_broken" | "repository_gone";
  detail: string;
  fixed: boolean;
}

/**
 * `worldline doctor`'s look at the worktrees Worldline made: a folder deleted
 * behind its back, and a folder whose link to its repository broke. Repairs what has one right
 * answer, and only for folders it made: git's record of a vanished worktree is pruned (that entry
 * alone, not `git worktree prune` of the whole repository) and its session archived, so its branch
 * can be restored; a broken link is mended with `git worktree repair`. Worktrees on runners are
 * on machines the doctor does not reach: left out.
 */
export async function checkWorktrees(db: store.Db, options: { fix: boolean }): Promise<WorktreeFinding[]> {
  const findings: WorktreeFinding[] = [];
  for (const row of await store.listWorktrees(db)) {
    const session = await store.getSession(db, row.sessionId);
    if (!session || session.archived || session.runner) continue;
    if (!(await statOrNull(row.repo))) {
      findings.push({ sessionId: row.sessionId, kind: "repository_gone", detail: `${row.repo} is gone`, fixed: false });
      continue;
    }
    if (!(await statOrNull(row.path))) {
      let fixed = false;
      if (options.fix) {
        await pruneEntry(row.repo, row.path);
        await store.updateSession(db, row.sessionId, { archived: true });
        fixed = true;
      }
      findings.push({
        sessionId: row.sessionId,
        kind: "worktree_vanished",
        detail: `${row.path} was deleted; branch ${row.branch} kept${fixed ? ", session archived (restore brings the branch back)" : ""}`,
        fixed,
      });
      continue;
    }
    if ((await runGit(here, { cwd: row.path, args: ["rev-parse", "--git-dir"] })).code === 0) continue;
    // git 2.39 mends the link and still exits 1 ("was broken"): whether it works now is the answer.
    if (options.fix) await runGit(here, { cwd: row.repo, args: ["worktree", "repair", row.path] });
    const works = options.fix && (await runGit(here, { cwd: row.path, args: ["rev-parse", "--git-dir"] })).code === 0;
    findings.push({
      sessionId: row.sessionId,
      kind: "worktree_broken",
      detail: `${row.path} no longer links to ${row.repo}${works ? " (repaired with git worktree repair)" : ""}`,
      fixed: works,
    });
  }
  return findings;
}

/** Removes git's administrative entry of one worktree whose folder is gone: what `git worktree prune` does, for that one. */
async function pruneEntry(repo: string, folder: string): Promise<void> {
  const common = path.resolve(repo, (await git(here, { cwd: repo, args: ["rev-parse", "--git-common-dir"] })).trim());
  const entries = path.join(common, "worktrees");
  const names = await readdir(entries).catch(() => [] as string[]); // no worktrees folder: nothing recorded
  for (const name of names) {
    const gitdir = await readFile(path.join(entries, name, "gitdir"), "utf8").catch(() => ""); // unreadable entry: not ours to judge
    if (path.dirname(gitdir.trim()) === folder) await rm(path.join(entries, name), { recursive: true, force: true });
  }
}
