import { randomUUID } from "node:crypto";
import path from "node:path";
import type { ChangeStat } from "../protocol";
import { git, runGit, type GitHost } from "./git";
import { isAncestor, revParse } from "./repo";

/**
 * What a worktree's diff is counted from: the branch tip Worldline last merged when the worktree
 * still builds on it (a squash merge leaves no ancestry behind), else where the branch and its
 * base meet. Null when the worktree's HEAD is unreadable.
 */
export async function diffOrigin(
  host: GitHost,
  input: { path: string; base: string; mergedSha: string | null },
): Promise<string | null> {
  const head = await revParse(host, input.path, "HEAD");
  if (!head) return null;
  if (input.mergedSha && (await isAncestor(host, input.path, input.mergedSha, head))) return input.mergedSha;
  const baseTip =
    (await revParse(host, input.path, `refs/heads/${input.base}`)) ?? (await revParse(host, input.path, input.base));
  if (!baseTip) return head;
  const met = await runGit(host, { cwd: input.path, args: ["merge-base", head, baseTip] });
  return met.code === 0 ? met.stdout.trim() : head;
}

/**
 * Files, added and deleted lines between `origin` and the worktree as it is now, committed or not,
 * untracked files included. Counted through a copy of the worktree's index (`git add -A` there),
 * so the user's own index is untouched and only files whose stat changed are hashed. The copy sits
 * beside the index, in the worktree's git folder, on the machine that holds it.
 */
export async function changeStat(host: GitHost, worktree: string, origin: string): Promise<ChangeStat> {
  const indexPath = path.resolve(
    worktree,
    (await git(host, { cwd: worktree, args: ["rev-parse", "--git-path", "index"] })).trim(),
  );
  const scratch = path.join(path.dirname(indexPath), `worldline-stat-${randomUUID()}`);
  try {
    // No index yet: `git add -A` builds one, so a failed copy is fine.
    await host.run({ cwd: worktree, argv: ["cp", "--", indexPath, scratch] });
    const env = { GIT_INDEX_FILE: scratch };
    await git(host, { cwd: worktree, args: ["add", "-A"], env });
    return parseShortstat(await git(host, { cwd: worktree, args: ["diff", "--cached", "--shortstat", origin], env }));
  } finally {
    await host.run({ cwd: worktree, argv: ["rm", "-f", "--", scratch] });
  }
}

/** ` 3 files changed, 10 insertions(+), 2 deletions(-)` → counts (absent parts are 0). */
export function parseShortstat(line: string): ChangeStat {
  const count = (pattern: RegExp) => Number(pattern.exec(line)?.[1] ?? 0);
  return {
    files: count(/(\d+) files? changed/),
    additions: count(/(\d+) insertions?\(\+\)/),
    deletions: count(/(\d+) deletions?\(-\)/),
  };
}
