import { randomBytes } from "node:crypto";
import path from "node:path";
import { WorldlineError } from "../errors";
import { git, makeDir, removeTree, runGit, type GitHost } from "./git";
import { branchExists, checkBranchName, repoBase, revParse, type RepoBase } from "./repo";

/** Branch slugs stay short enough to read in a list of branches. */
const SLUG_MAX_CHARS = 40;

/** `Fix the login test!` → `fix-the-login-test`; empty → `session`. */
export function slugOf(title: string | undefined): string {
  const slug = (title ?? "")
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, SLUG_MAX_CHARS)
    .replace(/-+$/, "");
  return slug || "session";
}

export interface PlannedWorktree extends RepoBase {
  id: string;
  branch: string;
  path: string;
}

/**
 * Checks everything a new worktree needs before anything is written: a repository with a commit,
 * a base that exists, a free and valid branch name, a free folder. Reads only.
 */
export async function planWorktree(
  host: GitHost,
  input: {
    /** Where the host makes worktrees (WorkspaceHost.worktreesFolder): never inside the user's repository. */
    folder: string;
    workspace: string;
    base?: string;
    branch?: string;
    title?: string;
  },
): Promise<PlannedWorktree> {
  const found = await repoBase(host, input.workspace, input.base);
  const id = randomBytes(4).toString("hex");
  const branch = input.branch ?? `worldline/${slugOf(input.title)}-${id}`;
  await checkBranchName(host, found.repo, branch);
  if (await branchExists(host, found.repo, branch))
    throw new WorldlineError("worktree:taken", `The branch ${branch} already exists in ${found.repo}; choose another.`);
  const folder = path.join(input.folder, `${path.basename(found.repo)}-${id}`);
  if (await host.stat(folder)) throw new WorldlineError("worktree:taken", `${folder} already exists.`);
  return { ...found, id, branch, path: folder };
}

/** `git worktree add -b <branch> <folder> <base>`; on failure nothing of it is left. */
export async function addWorktree(host: GitHost, plan: PlannedWorktree): Promise<void> {
  await makeDir(host, plan.repo, path.dirname(plan.path));
  const added = await runGit(host, {
    cwd: plan.repo,
    args: ["worktree", "add", "--quiet", "--no-track", "-b", plan.branch, plan.path, plan.baseSha],
  });
  if (added.code === 0) return;
  // The branch goes only if it is the one this call made (still at the base): never one made meanwhile by someone else.
  const made = (await revParse(host, plan.repo, `refs/heads/${plan.branch}`)) === plan.baseSha;
  await removeWorktree(host, plan.repo, plan.path, made ? plan.branch : undefined);
  const said = added.stderr.trim().split("\n").slice(-2).join(" ");
  if (/already exists/.test(said)) throw new WorldlineError("worktree:taken", `git worktree add: ${said}`);
  throw new WorldlineError("worktree:git_failed", `git worktree add failed: ${said}`);
}

/** Undoes `addWorktree`: the worktree's folder and git's record of it, and the branch when given. */
export async function removeWorktree(host: GitHost, repo: string, folder: string, branch?: string): Promise<void> {
  // Each step may have nothing to undo (add failed before it): what is absent is fine.
  await runGit(host, { cwd: repo, args: ["worktree", "remove", "--force", "--force", folder] });
  await removeTree(host, folder);
  if (branch) await runGit(host, { cwd: repo, args: ["branch", "-D", "--quiet", branch] });
}

/** Brings an archived worktree's folder back on its kept branch (`git worktree add <folder> <branch>`). */
export async function readdWorktree(host: GitHost, repo: string, folder: string, branch: string): Promise<void> {
  if (await host.stat(folder))
    throw new WorldlineError("worktree:taken", `${folder} exists already: move it away before restoring.`);
  if (!(await branchExists(host, repo, branch)))
    throw new WorldlineError("worktree:missing", `The branch ${branch} is gone from ${repo}: nothing to restore.`);
  await makeDir(host, repo, path.dirname(folder));
  await git(host, { cwd: repo, args: ["worktree", "add", "--quiet", folder, branch] }, "worktree:conflict");
}
