import type { MergeStrategy } from "../protocol";
import { WorldlineError } from "../errors";
import { git, gitFailure, runGit, type GitHost } from "./git";
import { checkoutOf, dirtyPaths, isAncestor, revParse } from "./repo";

/** Subjects a squash commit's body lists. */
const SQUASHED_SUBJECTS = 30;

export interface MergeInput {
  repo: string;
  branch: string;
  base: string;
  strategy: MergeStrategy;
  /** The squash commit's subject (the session's title). */
  title: string;
}

/**
 * Merges the worktree's branch into its base without touching any checkout until the result is
 * known: `git merge-tree --write-tree` makes the merged tree in the object store
 * (a conflict: 409 `merge:conflict` with its paths, and nothing else changed), `commit-tree` makes
 * the commit, and `update-ref <base> <new> <old>` moves the base only if nobody moved it meanwhile
 * (`merge:base_moved`; of two merges at once, one wins). A checkout that has the base checked out
 * gets the new files with `read-tree -m -u`, refused first (`merge:dirty`) when it has uncommitted
 * changes to a path the merge changes.
 */
export async function mergeIntoBase(host: GitHost, input: MergeInput): Promise<{ sha: string; tip: string }> {
  const prepared = await prepareMerge(host, input);
  await applyMerge(host, input, prepared);
  return { sha: prepared.sha, tip: prepared.tip };
}

/** A merge made but not applied: the base it was made on, the branch tip it merges, the new commit. */
export interface PreparedMerge {
  old: string;
  tip: string;
  sha: string;
}

/** Makes the merged commit (objects only: no ref, index or file changes); the conflicts say no. */
export async function prepareMerge(host: GitHost, input: MergeInput): Promise<PreparedMerge> {
  const { repo, branch, base } = input;
  const old = await revParse(host, repo, `refs/heads/${base}`);
  if (!old)
    throw new WorldlineError(
      "merge:bad_ref",
      `The base ${base} is not a branch of ${repo}: there is no branch to merge into.`,
    );
  const tip = await revParse(host, repo, `refs/heads/${branch}`);
  if (!tip) throw new WorldlineError("merge:missing", `The branch ${branch} is gone from ${repo}.`);
  if (await isAncestor(host, repo, tip, old))
    throw new WorldlineError("merge:nothing", `${base} already has every commit of ${branch}: commit first.`);
  const tree = await mergedTree(host, repo, old, tip);
  return { old, tip, sha: await commitMerge(host, input, { old, tip, tree }) };
}

/** Moves the base from `old` to the merge (only if still at `old`), and the checkout that has it out with it. */
export async function applyMerge(host: GitHost, input: MergeInput, prepared: PreparedMerge): Promise<void> {
  const { repo, branch, base } = input;
  const { old, sha } = prepared;
  const baseRef = `refs/heads/${base}`;
  const checkout = await checkoutOf(host, repo, base);
  if (checkout) await refuseDirty(host, checkout, old, sha);
  const moved = await runGit(host, {
    cwd: repo,
    args: ["update-ref", "-m", `worldline: merge ${branch} (${input.strategy})`, baseRef, sha, old],
  });
  if (moved.code !== 0)
    throw new WorldlineError("merge:base_moved", `${base} moved while merging (another merge or a commit): try again.`);
  if (checkout) await followInCheckout(host, checkout, { baseRef, old, sha });
}

async function mergedTree(host: GitHost, repo: string, old: string, tip: string): Promise<string> {
  const merged = await runGit(host, {
    cwd: repo,
    args: ["merge-tree", "--write-tree", "--name-only", "--no-messages", old, tip],
  });
  const lines = merged.stdout.split("\n");
  if (merged.code === 0) return lines[0].trim();
  if (merged.code === 1) {
    const paths = [...new Set(lines.slice(1).filter(Boolean))];
    throw new WorldlineError("merge:conflict", `Merging conflicts in ${paths.length} file(s): ${paths.join(", ")}`, {
      details: { paths },
    });
  }
  throw new WorldlineError("merge:git_failed", gitFailure(["merge-tree"], merged));
}

async function commitMerge(
  host: GitHost,
  input: MergeInput,
  at: { old: string; tip: string; tree: string },
): Promise<string> {
  if (input.strategy === "merge") {
    const message = `Merge branch '${input.branch}' into ${input.base}`;
    return (
      await git(host, { cwd: input.repo, args: ["commit-tree", at.tree, "-p", at.old, "-p", at.tip, "-m", message] })
    ).trim();
  }
  const subjects = (
    await git(host, {
      cwd: input.repo,
      args: ["log", `--max-count=${SQUASHED_SUBJECTS}`, "--format=* %s", at.tip, "--not", at.old],
    })
  ).trimEnd();
  const message = `${input.title}\n\nSquashed from ${input.branch}:\n${subjects}\n`;
  return (
    await git(host, { cwd: input.repo, args: ["commit-tree", at.tree, "-p", at.old, "-F", "-"], input: message })
  ).trim();
}

/** Uncommitted changes in the checkout to a path the merge writes: refused before anything moves. */
async function refuseDirty(host: GitHost, checkout: string, old: string, sha: string): Promise<void> {
  const changed = new Set(
    (await git(host, { cwd: checkout, args: ["diff", "--name-only", "-z", old, sha] })).split("\0").filter(Boolean),
  );
  const inTheWay = (await dirtyPaths(host, checkout)).filter((path) => changed.has(path));
  if (inTheWay.length > 0)
    throw new WorldlineError(
      "merge:dirty",
      `${checkout} has uncommitted changes to ${inTheWay.length} file(s) the merge changes: ${inTheWay.join(", ")}`,
      { details: { paths: inTheWay } },
    );
}

/**
 * The checkout's index and files go from the old base to the merge (a two-tree `read-tree`, which
 * itself refuses to lose a local change). If that fails after all (a change made since the check),
 * the base goes back to where it was, so the checkout and its branch never disagree.
 */
async function followInCheckout(
  host: GitHost,
  checkout: string,
  at: { baseRef: string; old: string; sha: string },
): Promise<void> {
  const followed = await runGit(host, { cwd: checkout, args: ["read-tree", "-m", "-u", at.old, at.sha] });
  if (followed.code === 0) return;
  await runGit(host, { cwd: checkout, args: ["update-ref", at.baseRef, at.old, at.sha] });
  throw new WorldlineError(
    "merge:dirty",
    `${checkout} changed during the merge: ${gitFailure(["read-tree"], followed)}`,
  );
}
