import fs from "node:fs";
import path from "node:path";

/**
 * WORLDLINE_HOME as the sessions of a bridge see it: no route, tool, file tree or
 * search opens a file there. It holds the database (a file route reading it would drop SQLite's
 * locks), the provider keys and the runner credential. The exceptions are the folders the bridge
 * makes for a session: a fork's copy of its workspace under `<home>/forks/` and a worktree under
 * `<home>/worktrees/`, each reachable from its own session only.
 */
export class ProtectedHome {
  private readonly made: string[];

  /** `home` as a real path where it exists (workspaces and resolved files are real paths). */
  constructor(home: string) {
    this.home = realOrResolved(home);
    this.made = [path.join(this.home, "forks"), path.join(this.home, "worktrees")];
  }

  readonly home: string;

  /** True when `real` is in WORLDLINE_HOME and not inside `workspace`, a fork's own folder. */
  refuses(real: string, workspace?: string): boolean {
    if (!within(this.home, real)) return false;
    return !(workspace && this.isMadeFolder(workspace) && within(workspace, real));
  }

  /** A folder under `<home>/forks/` or `<home>/worktrees/`: a session's workspace the bridge made itself. */
  isMadeFolder(workspace: string): boolean {
    return this.made.some((root) => workspace !== root && within(root, workspace));
  }

  /** True when `folder` is an ancestor of WORLDLINE_HOME (a session there could list it). */
  holds(folder: string): boolean {
    return within(folder, this.home);
  }
}

function within(root: string, target: string): boolean {
  if (target === root) return true;
  return target.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

function realOrResolved(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    // Not made yet (a runner before its first start): it will be made where it is named.
    return path.resolve(folder);
  }
}
