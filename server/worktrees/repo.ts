import { WorldlineError } from "../errors";
import { git, runGit, type GitHost } from "./git";

/** Where a new worktree starts: the repository's top level, the base as stored, and the commit it names. */
export interface RepoBase {
  repo: string;
  /** A branch name (short), or a commit sha when the base is no local branch (detached HEAD, a tag). */
  base: string;
  baseSha: string;
}

/**
 * The repository `workspace` is in and the base a worktree of it starts from:
 * `worktree:not_a_repo` outside a repository or before its first commit, `worktree:bad_ref` for a
 * base that names no commit. Reads only.
 */
export async function repoBase(host: GitHost, workspace: string, requested?: string): Promise<RepoBase> {
  const top = await runGit(host, { cwd: workspace, args: ["rev-parse", "--show-toplevel"] });
  if (top.code !== 0 || !top.stdout.trim())
    throw new WorldlineError("worktree:not_a_repo", `${workspace} is not inside a git repository (with a work tree).`);
  const repo = top.stdout.trim();
  const head = await runGit(host, { cwd: repo, args: ["rev-parse", "--verify", "-q", "HEAD^{commit}"] });
  if (head.code !== 0)
    throw new WorldlineError(
      "worktree:not_a_repo",
      `The repository at ${repo} has no commit yet: make a first commit, then start a worktree session.`,
    );
  if (requested === undefined) {
    const branch = await runGit(host, { cwd: repo, args: ["symbolic-ref", "-q", "--short", "HEAD"] });
    const sha = head.stdout.trim();
    return { repo, base: branch.code === 0 ? branch.stdout.trim() : sha, baseSha: sha };
  }
  if (requested.startsWith("-"))
    throw new WorldlineError("worktree:bad_ref", `"${requested}" is not a branch, tag or commit.`);
  const local = await runGit(host, { cwd: repo, args: ["show-ref", "--verify", "--hash", `refs/heads/${requested}`] });
  if (local.code === 0) return { repo, base: requested, baseSha: local.stdout.trim() };
  const other = await runGit(host, { cwd: repo, args: ["rev-parse", "--verify", "-q", `${requested}^{commit}`] });
  if (other.code !== 0)
    throw new WorldlineError("worktree:bad_ref", `No branch, tag or commit "${requested}" in ${repo}.`);
  const sha = other.stdout.trim();
  return { repo, base: sha, baseSha: sha };
}

export async function branchExists(host: GitHost, repo: string, branch: string): Promise<boolean> {
  return (await runGit(host, { cwd: repo, args: ["show-ref", "--verify", "-q", `refs/heads/${branch}`] })).code === 0;
}

/** A branch name git accepts (`git check-ref-format --branch`), else `worktree:bad_ref`. */
export async function checkBranchName(host: GitHost, repo: string, branch: string): Promise<void> {
  const checked = await runGit(host, { cwd: repo, args: ["check-ref-format", "--branch", branch] });
  if (checked.code !== 0 || branch.startsWith("-"))
    throw new WorldlineError("worktree:bad_ref", `"${branch}" is not a valid branch name.`);
}

export async function revParse(host: GitHost, cwd: string, rev: string): Promise<string | null> {
  const result = await runGit(host, { cwd, args: ["rev-parse", "--verify", "-q", `${rev}^{commit}`] });
  return result.code === 0 ? result.stdout.trim() : null;
}

export async function isAncestor(host: GitHost, cwd: string, ancestor: string, of: string): Promise<boolean> {
  return (await runGit(host, { cwd, args: ["merge-base", "--is-ancestor", ancestor, of] })).code === 0;
}

/** Uncommitted paths of a checkout (staged, unstaged, untracked; renames as their new path). */
export async function dirtyPaths(host: GitHost, cwd: string): Promise<string[]> {
  const out = await git(host, { cwd, args: ["status", "--porcelain=v1", "-z", "--untracked-files=all"] });
  const entries = out.split("\0");
  const paths: string[] = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry.length < 4) continue;
    paths.push(entry.slice(3));
    if (entry[0] === "R" || entry[0] === "C") i++; // the rename's source follows as its own entry
  }
  return paths;
}

/** The checkout (main or another worktree) that has `refs/heads/<branch>` checked out, if any. */
export async function checkoutOf(host: GitHost, repo: string, branch: string): Promise<string | null> {
  const out = await git(host, { cwd: repo, args: ["worktree", "list", "--porcelain"] });
  let current: string | null = null;
  for (const line of out.split("\n")) {
    if (line.startsWith("worktree ")) current = line.slice("worktree ".length);
    else if (line === `branch refs/heads/${branch}`) return current;
  }
  return null;
}
