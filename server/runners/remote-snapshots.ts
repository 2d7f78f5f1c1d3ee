import type {
  DiffResult,
  MaterializeResult,
  RestoreOptions,
  RestoreResult,
  RevertSpec,
  SnapshotOptions,
  SnapshotRepo,
  SnapshotResult,
} from "../checkpoints/types";
import type { CallOptions, RunnerLink } from "./link";

/**
 * The shadow repository of a workspace on a runner: each operation is one request, which the
 * runner does with its own ShadowRepo in its data directory (server/runner/snapshots.ts). The
 * checkpoint rows, numbers and baselines stay in the hub's store (server/checkpoints).
 */
export class RemoteSnapshots implements SnapshotRepo {
  readonly key: string;

  constructor(
    private readonly link: RunnerLink,
    private readonly workspace: string,
    private readonly options: CallOptions,
  ) {
    this.key = `${link.name}:${workspace}`;
  }

  snapshot(options: SnapshotOptions = {}): Promise<SnapshotResult> {
    const { workspace } = this;
    const { message = "snapshot", changes = true } = options;
    return this.link.call({ op: "snapshots.snapshot", workspace, message, changes }, this.options);
  }

  diff(from: string, to?: string): Promise<DiffResult> {
    return this.link.call({ op: "snapshots.diff", workspace: this.workspace, from, to }, this.options);
  }

  changedSince(commit: string): Promise<string[]> {
    return this.link.call({ op: "snapshots.changedSince", workspace: this.workspace, commit }, this.options);
  }

  restore(target: string, options: RestoreOptions = {}): Promise<RestoreResult> {
    return this.link.call({ op: "snapshots.restore", workspace: this.workspace, target, ...options }, this.options);
  }

  async fileAt(commit: string, path: string): Promise<Buffer | undefined> {
    return bytes(
      await this.link.call({ op: "snapshots.fileAt", workspace: this.workspace, commit, path }, this.options),
    );
  }

  async readNow(path: string): Promise<Buffer | undefined> {
    return bytes(await this.link.call({ op: "snapshots.readNow", workspace: this.workspace, path }, this.options));
  }

  revert(spec: RevertSpec, options: { dryRun?: boolean } = {}): Promise<MaterializeResult> {
    const { workspace } = this;
    return this.link.call({ op: "snapshots.revert", workspace, spec, dryRun: options.dryRun ?? false }, this.options);
  }

  async fork(target: string, options: { name: string; worktree: boolean }): Promise<string> {
    const { workspace } = this;
    return (await this.link.call({ op: "snapshots.fork", workspace, target, ...options }, this.options)).workspace;
  }
}

function bytes(value: Uint8Array | null): Buffer | undefined {
  return value === null ? undefined : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}
