import { WorldlineError } from "../errors";
import type { Fence, WorkspaceHost } from "./types";

/**
 * The host of every workspace: this machine's, or a runner's. Built once at the composition root
 * (server/main.ts); every caller gets a session's host here, and this is the one place that tells
 * a session on this machine (`runner` null) from one on a runner.
 */
export class WorkspaceHosts {
  constructor(
    /** This machine, in process (LocalWorkspaceHost). */
    readonly local: WorkspaceHost,
    /** A runner's host (server/runners); a turn's carries its claim, which the runner checks. Absent: no runners. */
    private readonly remote: (runner: string, fence?: Fence) => WorkspaceHost = noRunners,
  ) {}

  /** The host of a workspace on `runner` (null or absent: this machine). */
  of(runner: string | null | undefined, fence?: Fence): WorkspaceHost {
    return runner ? this.remote(runner, fence) : this.local;
  }
}

function noRunners(runner: string): never {
  throw new WorldlineError("runner:not_found", `This process serves no runner "${runner}".`);
}
