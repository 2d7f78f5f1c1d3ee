import { WorldlineError } from "../errors";
import type { Fence, WorkspaceHost } from "./types";

/** Paths that changed in a watched workspace on `runner` (null: this machine), for `files.changed`. */
type FilesChangedListener = (runner: string | null, workspace: string, paths: string[]) => void;

/** Where changes come from: each host's watcher (this machine's WorkspaceFiles, the runners'). */
type FilesChangedSource = (listener: FilesChangedListener) => () => void;

/**
 * The host of every workspace: this machine's, or a runner's. Built once at the composition root
 * (server/bridge/core.ts); every caller gets a session's host here, and this is the one place that tells
 * a session on this machine (`runner` null) from one on a runner.
 */
export class WorkspaceHosts {
  constructor(
    /** This machine, in process (LocalWorkspaceHost). */
    readonly local: WorkspaceHost,
    /** A runner's host (server/runners); a turn's carries its claim, which the runner checks. Absent: no runners. */
    private readonly remote: (runner: string, fence?: Fence) => WorkspaceHost = noRunners,
    /** The hosts' file watchers; absent: nothing is watched. */
    private readonly changes: FilesChangedSource = () => () => undefined,
  ) {}

  /** Follows the changes every host's watcher sees; returns the unsubscriber. */
  onFilesChanged(listener: FilesChangedListener): () => void {
    return this.changes(listener);
  }

  /** The host of a workspace on `runner` (null or absent: this machine). */
  of(runner: string | null | undefined, fence?: Fence): WorkspaceHost {
    return runner ? this.remote(runner, fence) : this.local;
  }
}

function noRunners(runner: string): never {
  throw new WorldlineError("runner:not_found", `This process serves no runner "${runner}".`);
}
