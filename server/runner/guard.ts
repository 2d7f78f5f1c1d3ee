import fs from "node:fs/promises";
import path from "node:path";
import { WorldlineError } from "../errors";
import { isWithin, realpathLoose, resolveInWorkspace, type ResolvedPath } from "../host";

/**
 * The runner's own workspace boundary: every path a hub names is followed through its
 * symlinks (realpath, also for paths that do not exist yet) and must land under one of the
 * roots the runner was started with. The hub checks paths too; this check does not trust it.
 */
export class RootGuard {
  private constructor(
    readonly roots: readonly string[],
    /** Folders served beside the roots but not offered to the hub as roots (the runner's own forks and worktrees folders). */
    private readonly also: readonly string[] = [],
  ) {}

  /**
   * Roots as real paths; each must be an existing folder. `also` are folders of the runner's
   * own (created when missing) that are served too but not offered as roots.
   */
  static async create(roots: string[], also: string[] = []): Promise<RootGuard> {
    const own = await Promise.all(
      also.map(async (dir) => fs.realpath(await fs.mkdir(dir, { recursive: true }).then(() => dir))),
    );
    const real = await Promise.all(
      roots.map(async (root) => {
        const resolved = await fs.realpath(path.resolve(root)).catch(() => {
          throw new Error(`--root ${root}: no such folder`);
        });
        if (!(await fs.stat(resolved)).isDirectory()) throw new Error(`--root ${root}: not a folder`);
        return resolved;
      }),
    );
    return new RootGuard([...new Set(real)], own);
  }

  /**
   * The real path of `target` (every symlink followed, one realpath for a path that exists) when it
   * is under a root; otherwise a `runner:outside_roots` error.
   */
  async confine(target: string): Promise<string> {
    if (target.includes("\0")) throw new WorldlineError("fs:invalid_path", "The path contains a NUL byte.");
    const real = await realpathLoose(path.resolve(this.roots[0], target));
    if (!this.contains(real)) throw outside(target);
    return real;
  }

  /**
   * `confine` for a write through the file tools: a file with more than one name (hard links) is
   * refused whatever the hub says was approved, since its other names may be outside the roots and
   * nothing short of a walk of the whole disk finds them. The local tools ask the user instead; a
   * runner cannot see that approval, only the hub's word for it.
   */
  async confineWrite(target: string): Promise<ResolvedPath> {
    const resolved = await resolveInWorkspace(this.roots[0], target);
    if (!this.contains(resolved.real)) throw outside(target);
    if (!resolved.hardLinks) return resolved;
    throw new WorldlineError(
      "runner:outside_roots",
      `${target} has ${resolved.hardLinks} hard links; another of its names may be outside the folders this runner serves, so the runner refused to write through it. To edit it, break the link first (copy it, then move the copy over it).`,
    );
  }

  contains(real: string): boolean {
    return [...this.roots, ...this.also].some((root) => isWithin(root, real));
  }

  /** The runner's own folder (its forks or worktrees folder) a path is in, when it is under no root. */
  ownFolderOf(real: string): string | undefined {
    if (this.rootOf(real) !== undefined) return undefined;
    return this.also.find((own) => isWithin(own, real));
  }

  /** The root a path is under (for the folder picker, which does not climb above it). */
  rootOf(real: string): string | undefined {
    return this.roots.find((root) => isWithin(root, real));
  }
}

function outside(target: string): WorldlineError {
  return new WorldlineError(
    "runner:outside_roots",
    `${target} is outside the folders this runner serves; the runner refused it.`,
  );
}
