import fs from "node:fs/promises";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { gitCheckIgnore } from "./git-check-ignore";
import { isSkipped } from "./skip-list";
import { statOrNull } from "../stat-or-null";

interface CachedRules {
  mtimeMs: number;
  rules: Ignore | null;
}

/**
 * What is in the workspace: the skip list plus every .gitignore from the root down to a
 * path, each applied relative to its own folder, the deepest match winning as in git.
 * Shared by @-mentions, glob/grep and (through the exclude list) checkpoints, so they agree.
 * The file tree asks `ignoredChildren` instead: in a git repository, git's own answer.
 */
export class WorkspaceIgnore {
  private readonly byDir = new Map<string, Promise<CachedRules>>();

  /**
   * @param revalidate re-stat each .gitignore on every lookup (a long-lived tree that must see
   *   edits); a one-shot walk passes false and reads each .gitignore once.
   */
  constructor(
    private readonly root: string,
    private readonly revalidate = true,
  ) {}

  /** True when `rel` (posix, relative to the root, non-empty) is not part of the workspace. */
  async ignored(rel: string, isDir: boolean): Promise<boolean> {
    return isSkipped(rel, isDir) || this.gitignoreFilesIgnore(rel, isDir);
  }

  /**
   * The names among a folder's entries that git ignores, for the file tree, which hides only
   * these (and `.git`): a repository that tracks its `dist/` shows it, as in an editor. In a git
   * work tree git itself decides (its exclude file and core.excludesFile count, a tracked file
   * never is ignored), asked afresh at each listing so a `git add -f` or an edited exclude file
   * shows at the next refresh; elsewhere the .gitignore files do.
   */
  async ignoredChildren(relDir: string, children: readonly { name: string; isDir: boolean }[]): Promise<Set<string>> {
    const byGit = await gitCheckIgnore(
      path.join(this.root, relDir),
      children.map((child) => child.name),
    );
    if (byGit) return byGit;
    const ignored = new Set<string>();
    for (const child of children)
      if (await this.gitignoreFilesIgnore(relDir ? `${relDir}/${child.name}` : child.name, child.isDir))
        ignored.add(child.name);
    return ignored;
  }

  /** True when the workspace's .gitignore files alone leave `rel` out. */
  private async gitignoreFilesIgnore(rel: string, isDir: boolean): Promise<boolean> {
    const parts = rel.split("/");
    let ignored = false;
    for (let depth = 0; depth < parts.length; depth++) {
      const rules = await this.rulesOf(parts.slice(0, depth).join("/"));
      if (!rules) continue;
      const sub = parts.slice(depth).join("/") + (isDir ? "/" : "");
      const result = rules.test(sub);
      if (result.ignored) ignored = true;
      else if (result.unignored) ignored = false;
    }
    return ignored;
  }

  private async rulesOf(dir: string): Promise<Ignore | null> {
    const file = path.join(this.root, dir, ".gitignore");
    const cached = this.byDir.get(dir);
    if (cached && !this.revalidate) return (await cached).rules;
    const stat = await statOrNull(file);
    const mtimeMs = stat?.mtimeMs ?? -1;
    if (cached) {
      const known = await cached;
      if (known.mtimeMs === mtimeMs) return known.rules;
    }
    const loading = (async (): Promise<CachedRules> => {
      const text = stat ? await fs.readFile(file, "utf8").catch(() => "") /* removed since the stat: no rules */ : "";
      return { mtimeMs, rules: text ? ignore().add(text) : null };
    })();
    this.byDir.set(dir, loading);
    return (await loading).rules;
  }
}
