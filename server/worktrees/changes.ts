import { randomUUID } from "node:crypto";
import { copyFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ChangeStat } from "../protocol";
import { git, runGit } from "./git";
import { isAncestor, revParse } from "./repo";

/**
 * What a worktree's diff is counted from: the branch tip Worldline last merged when the worktree
 * still builds on it (a squash merge leaves no ancestry behind), else where the branch and its
 * base meet. Null when the worktree's HEAD is unreadable.
 */
export async function diffOrigin(input: {
  path: string;
  base: string;
  mergedSha: string | null;
}): Promise<string | null> {
  const head = await revParse(input.path, "HEAD");
  if (!head) return null;
  if (input.mergedSha && (await isAncestor(input.path, input.mergedSha, head))) return input.mergedSha;
  const baseTip = (await revParse(input.path, `refs/heads/${input.base}`)) ?? (await revParse(input.path, input.base));
  if (!baseTip) return head;
  const met = await runGit({ cwd: input.path, args: ["merge-base", head, baseTip] });
  return met.code === 0 ? met.stdout.trim() : head;
}

/**
 * Files, added and deleted lines between `origin` and the worktree as it is now, committed or not,
 * untracked files included. Counted through a copy of the worktree's index (`git add -A` there),
 * so the user's own index is untouched and only files whose stat changed are hashed.
 */
export async function changeStat(worktree: string, origin: string): Promise<ChangeStat> {
  const indexPath = path.resolve(
    worktree,
    (await git({ cwd: worktree, args: ["rev-parse", "--git-path", "index"] })).trim(),
  );
  const scratch = path.join(tmpdir(), `worldline-stat-${randomUUID()}`);
  try {
    await copyFile(indexPath, scratch).catch(() => undefined); // no index yet: `git add -A` builds one
    const env = { GIT_INDEX_FILE: scratch };
    await git({ cwd: worktree, args: ["add", "-A"], env });
    return parseShortstat(await git({ cwd: worktree, args: ["diff", "--cached", "--shortstat", origin], env }));
  } finally {
    await rm(scratch, { force: true });
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
