import { WorldlineError, errorMessage } from "../errors";
import type { CommitResult, MergeResult, MergeStrategy, PushResult } from "../protocol";
import * as store from "../store";
import { COMMIT_SYSTEM, cleanModelMessage, commitStaged, stageAll, stagedDiff, summaryMessage } from "./commit";
import { git, runGit } from "./git";
import { mergeIntoBase } from "./merge";
import { compareUrl, pushBranch } from "./push";
import { dirtyPaths, revParse } from "./repo";
import type { WorktreeCore } from "./service";

/** A commit message the model takes longer than this to write is not worth holding the button for. */
const MESSAGE_TIMEOUT_MS = 45_000;

/**
 * Shipping a worktree's work: commit on its branch, merge into its base, push, and
 * "Ask the agent to resolve" a conflict. One operation at a time per session in this process; across
 * bridges a merge is still one-wins (merge.ts moves the base with compare-and-swap).
 */
export class Shipping {
  constructor(private readonly core: WorktreeCore) {}

  async commit(sessionId: string, input: { message?: string }): Promise<CommitResult> {
    return this.core.exclusive(sessionId, "commit:busy", async () => {
      const { session, row, host } = await this.core.present(sessionId);
      const staged = await stageAll(host, row.path);
      const written = input.message
        ? { message: input.message, by: "user" as const }
        : await this.writeMessage(session.model, await stagedDiff(host, row.path), staged);
      const sha = await commitStaged(host, row.path, written.message);
      const message = (await git(host, { cwd: row.path, args: ["log", "-1", "--format=%B", sha] })).trimEnd();
      this.core.notice(sessionId, "info", `Committed ${sha.slice(0, 7)} on ${row.branch}: ${message.split("\n")[0]}`);
      await this.core.refreshChanges(sessionId);
      return { sha, message, message_by: written.by };
    });
  }

  async merge(sessionId: string, input: { strategy: MergeStrategy }): Promise<MergeResult> {
    return this.core.exclusive(sessionId, "merge:busy", async () => {
      const { session, row, host } = await this.core.present(sessionId);
      const { sha, tip } = await mergeIntoBase(host, {
        repo: row.repo,
        branch: row.branch,
        base: row.base,
        strategy: input.strategy,
        title: session.title,
      });
      await store.updateWorktree(this.core.deps.db, sessionId, { mergedSha: tip });
      this.core.notice(
        sessionId,
        "info",
        `Merged ${row.branch} into ${row.base} (${input.strategy}): ${sha.slice(0, 7)}.`,
      );
      await this.core.refreshChanges(sessionId);
      return { sha, base: row.base };
    });
  }

  async push(sessionId: string, input: { remote?: string }): Promise<PushResult> {
    return this.core.exclusive(sessionId, "push:busy", async () => {
      const { row, host } = await this.core.present(sessionId);
      const tip = await revParse(host, row.repo, `refs/heads/${row.branch}`);
      const { remote, url } = await pushBranch(host, { repo: row.repo, branch: row.branch, remote: input.remote });
      if (tip) await store.updateWorktree(this.core.deps.db, sessionId, { pushedSha: tip });
      const baseIsBranch = (await revParse(host, row.repo, `refs/heads/${row.base}`)) !== null;
      this.core.notice(sessionId, "info", `Pushed ${row.branch} to ${remote}.`);
      return { remote, branch: row.branch, compare_url: compareUrl(url, row.branch, baseIsBranch ? row.base : null) };
    });
  }

  /**
   * Brings the base into the worktree (`git merge <base>`), and when that conflicts, asks the agent
   * to resolve it in a prompt. Uncommitted work is refused first: a merge would mix with it.
   */
  async resolve(sessionId: string): Promise<{ conflicts: string[]; task_id: string | null; sha: string | null }> {
    const started = await this.core.exclusive(sessionId, "merge:busy", async () => {
      const { row, host } = await this.core.present(sessionId);
      const dirty = await dirtyPaths(host, row.path);
      if (dirty.length > 0)
        throw new WorldlineError("merge:dirty", `Commit the worktree's changes first: ${dirty.join(", ")}`, {
          details: { paths: dirty },
        });
      const into = (await revParse(host, row.repo, `refs/heads/${row.base}`)) ? `refs/heads/${row.base}` : row.base;
      const merged = await runGit(host, { cwd: row.path, args: ["merge", "--no-ff", "--no-edit", into] });
      if (merged.code === 0) return { row, host, conflicts: [] as string[] };
      const conflicts = (await git(host, { cwd: row.path, args: ["diff", "--name-only", "--diff-filter=U", "-z"] }))
        .split("\0")
        .filter(Boolean);
      if (conflicts.length === 0)
        throw new WorldlineError("merge:git_failed", `git merge ${row.base} failed: ${merged.stderr.trim()}`);
      return { row, host, conflicts };
    });
    const { row, host, conflicts } = started;
    if (conflicts.length === 0) {
      await this.core.refreshChanges(sessionId);
      return { conflicts, task_id: null, sha: await revParse(host, row.path, "HEAD") };
    }
    const { taskId } = await this.core.deps.prompt(sessionId, resolvePrompt(row.base, conflicts));
    return { conflicts, task_id: taskId, sha: null };
  }

  private async writeMessage(
    sessionModel: string | null,
    diff: string,
    staged: { stat: string; names: string[] },
  ): Promise<{ message: string; by: "model" | "summary" }> {
    const signal = AbortSignal.timeout(MESSAGE_TIMEOUT_MS);
    const answer = await this.core.deps.complete(sessionModel, COMMIT_SYSTEM, diff, signal).catch((error: unknown) => {
      // The commit goes ahead with a summary; the bridge log keeps why the model could not write it.
      console.error(`[worldline] writing a commit message failed: ${errorMessage(error)}`);
      return null;
    });
    const message = answer === null ? null : cleanModelMessage(answer);
    return message ? { message, by: "model" } : { message: summaryMessage(staged), by: "summary" };
  }
}

function resolvePrompt(base: string, conflicts: string[]): string {
  return [
    `I merged \`${base}\` into this branch to bring it up to date, and git stopped with conflicts in:`,
    ...conflicts.map((path) => `- ${path}`),
    "",
    "Resolve each conflict so that both sides' intent is kept (read the conflict markers, and the history when it helps),",
    "run the project's checks if it has some, then `git add` the files and finish the merge with `git commit --no-edit`.",
  ].join("\n");
}
