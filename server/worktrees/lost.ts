import type { UnmergedDetails } from "../protocol";
import { git, type GitHost } from "./git";
import { dirtyPaths } from "./repo";

/** Commits listed in a refusal: enough to see what is at stake, bounded for a big branch. */
const LOST_COMMITS_SHOWN = 50;

/**
 * What removing a worktree would lose: its branch's commits reachable from neither
 * the base, a remote-tracking branch, nor the tips Worldline merged or pushed; and its uncommitted
 * paths, untracked files included. The branch itself is always kept, so "lose" means: only the
 * branch would still hold them, unmerged and unpushed.
 */
export async function wouldLose(
  host: GitHost,
  input: {
    path: string;
    repo: string;
    branch: string;
    base: string;
    mergedSha: string | null;
    pushedSha: string | null;
  },
): Promise<UnmergedDetails> {
  const known = [input.mergedSha, input.pushedSha].filter((sha): sha is string => Boolean(sha));
  const log = await git(host, {
    cwd: input.repo,
    args: [
      "log",
      `--max-count=${LOST_COMMITS_SHOWN}`,
      "--format=%H%x09%s",
      `refs/heads/${input.branch}`,
      "--not",
      "--remotes",
      ...(await baseRefs(host, input.repo, input.base)),
      ...known,
      "--",
    ],
  });
  const commits = log
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [sha, ...subject] = line.split("\t");
      return { sha, subject: subject.join("\t") };
    });
  return { commits, files: await dirtyPaths(host, input.path) };
}

async function baseRefs(host: GitHost, repo: string, base: string): Promise<string[]> {
  const out = await git(host, { cwd: repo, args: ["for-each-ref", "--format=%(refname)", `refs/heads/${base}`] });
  return out.trim() ? [out.trim()] : [base];
}

export function describeLoss(loss: UnmergedDetails): string {
  const parts: string[] = [];
  if (loss.commits.length > 0) parts.push(`${loss.commits.length} commit(s) neither merged nor pushed`);
  if (loss.files.length > 0)
    parts.push(
      `${loss.files.length} uncommitted file(s): ${loss.files.slice(0, 5).join(", ")}${loss.files.length > 5 ? ", …" : ""}`,
    );
  return parts.join("; ");
}
