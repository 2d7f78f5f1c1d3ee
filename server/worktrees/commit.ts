import { WorldlineError } from "../errors";
import { git, runGit, gitFailure, type GitHost } from "./git";

/** The model reads at most this much of the diff: a message needs the gist, not every line. */
const DIFF_FOR_MODEL_CHARS = 24_000;
/** Paths a summary message names before it says "and N more". */
const SUMMARY_PATHS = 5;

export const COMMIT_SYSTEM = [
  "You write git commit messages. Given a diff, reply with the commit message only:",
  "a subject line of at most 72 characters in the imperative mood, then a blank line and a short body",
  "that says why and what changed, when the diff needs one. No quotes, no code fences, no label.",
].join(" ");

/** Stages everything in the worktree (new files too); `commit:nothing` when nothing differs from HEAD. */
export async function stageAll(host: GitHost, worktree: string): Promise<{ stat: string; names: string[] }> {
  await git(host, { cwd: worktree, args: ["add", "-A"] });
  const names = (await git(host, { cwd: worktree, args: ["diff", "--cached", "--name-only", "-z"] }))
    .split("\0")
    .filter(Boolean);
  if (names.length === 0)
    throw new WorldlineError("commit:nothing", "Nothing to commit: the worktree matches its last commit.");
  return { stat: await git(host, { cwd: worktree, args: ["diff", "--cached", "--stat=100"] }), names };
}

/** The staged diff for the model, cut to a size it reads in one go. */
export async function stagedDiff(host: GitHost, worktree: string): Promise<string> {
  const diff = await git(host, { cwd: worktree, args: ["diff", "--cached", "--no-color", "--no-ext-diff"] });
  return diff.length > DIFF_FOR_MODEL_CHARS ? `${diff.slice(0, DIFF_FOR_MODEL_CHARS)}\n[diff cut here]` : diff;
}

/** A message without a model: what changed, in a line, with the stat below. */
export function summaryMessage(staged: { stat: string; names: string[] }): string {
  const shown = staged.names.slice(0, SUMMARY_PATHS).join(", ");
  const more = staged.names.length > SUMMARY_PATHS ? ` and ${staged.names.length - SUMMARY_PATHS} more` : "";
  const subject = `Update ${shown}${more}`;
  return `${subject.length > 72 ? `Update ${staged.names.length} files` : subject}\n\n${staged.stat.trimEnd()}`;
}

/** The model's answer as a message: no reasoning tags, no fences; null when nothing is left. */
export function cleanModelMessage(answer: string): string | null {
  const text = answer
    .replace(/<think>[\s\S]*?(<\/think>|$)/gi, "")
    .replace(/^```[a-z]*\n?|```\s*$/gm, "")
    .trim();
  return text || null;
}

/** Commits what is staged, author and committer from the repository's git config; the new sha. */
export async function commitStaged(host: GitHost, worktree: string, message: string): Promise<string> {
  const committed = await runGit(host, {
    cwd: worktree,
    args: ["commit", "--quiet", "--cleanup=strip", "-F", "-"],
    input: message,
  });
  if (committed.code !== 0) {
    // A hook that said no, or no identity configured: git's words say which.
    throw new WorldlineError("commit:blocked", gitFailure(["commit"], committed));
  }
  return (await git(host, { cwd: worktree, args: ["rev-parse", "HEAD"] })).trim();
}
