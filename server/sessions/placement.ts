import fs from "node:fs";
import path from "node:path";
import type { ProtectedHome } from "../config";
import { WorldlineError } from "../errors";
import type { Role } from "../protocol";

/** Who asks for a new session: a person's role, or undefined for the hub's operator (launch token, WORLDLINE_TOKENS). */
export interface Placement {
  runner: string | null;
  /** The real path the host's check returned. */
  workspace: string;
  role?: Role;
  agentCommand?: string;
  /** A folder the bridge made (a fork's copy, a worktree): under `<home>/forks/` or `<home>/worktrees/`. */
  made: boolean;
}

/**
 * Where a session may run on this machine: never
 * in WORLDLINE_HOME; a member or viewer only under WORLDLINE_HUB_ROOTS (runners have their own
 * roots); an external agent's command line on this machine only for admins and the operator.
 */
export class WorkspacePlacement {
  private readonly hubRoots: string[];

  constructor(
    private readonly home: ProtectedHome,
    hubRoots: string[],
  ) {
    this.hubRoots = hubRoots.map((root) => {
      try {
        return fs.realpathSync(root);
      } catch {
        return path.resolve(root);
      }
    });
  }

  check(placement: Placement): void {
    // A runner's machine has its own boundary (server/runner/guard.ts).
    if (placement.runner !== null) return;
    const { workspace, role } = placement;
    if (this.home.refuses(workspace) && !(placement.made && this.home.isMadeFolder(workspace)))
      throw new WorldlineError(
        "workspace:forbidden",
        `${workspace} is in the bridge's data folder (WORLDLINE_HOME); sessions cannot open there. Choose another folder.`,
      );
    if (role === undefined || role === "admin") return;
    if (placement.agentCommand)
      throw new WorldlineError(
        "auth:forbidden",
        "An external agent's command line runs on the hub's machine with the hub's rights: only admins may start one. Use a runner, or ask an admin.",
      );
    if (placement.made) return;
    if (!this.hubRoots.some((root) => workspace === root || workspace.startsWith(root + path.sep)))
      throw new WorldlineError(
        "workspace:forbidden",
        this.hubRoots.length === 0
          ? "On this hub, members open sessions on a runner; the hub's own machine is for admins."
          : `On this hub, members open sessions on a runner or under ${this.hubRoots.join(", ")}.`,
      );
  }
}
