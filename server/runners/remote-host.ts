import { randomUUID } from "node:crypto";
import type { SnapshotRepo } from "../checkpoints/types";
import type { WorldlineError } from "../errors";
import type {
  DirEntry,
  ExecSpec,
  ExitInfo,
  Fence,
  FilesPort,
  FileStat,
  GlobMatch,
  HostProcess,
  PageRequest,
  ResolvedPage,
  ResolvedPath,
  SearchOutcome,
  SearchRequest,
  StdioProcess,
  StdioSpec,
  WorkspaceHost,
  WorkspacePromptFiles,
} from "../host";
import type { SkillView } from "../protocol";
import type { PtyOpener } from "../pty";
import type { RunnerLink } from "./link";
import { RemoteFiles } from "./remote-files";
import { remotePtyOpener } from "./remote-pty";
import { RemoteSnapshots } from "./remote-snapshots";
import { startRemoteStdio } from "./remote-stdio";

/**
 * A workspace on a runner's machine: every operation is one request over the runner's
 * connection (server/runners/link.ts); the runner does it with its own LocalHost, inside
 * its roots. Paths are the runner's. A turn's host carries the turn's claim (its fence), so a
 * runner refuses the requests of a bridge whose claim was taken over.
 */
export class RemoteHost implements WorkspaceHost {
  constructor(
    readonly runner: string,
    private readonly hub: RemoteHostHub,
    private readonly fence?: Fence,
  ) {}

  private linked: RunnerLink | undefined;

  /**
   * The runner's connection, taken on first use and kept (a revoked runner's closed link fails the
   * calls at once); a name nobody enrolled gets none before checkWorkspace refused it.
   */
  private get link(): RunnerLink {
    return (this.linked ??= this.hub.link(this.runner));
  }

  /** The IDE's file views: the person's, so not fenced. */
  get files(): FilesPort {
    return new RemoteFiles(this.link);
  }

  /** Terminals: the person's, so not fenced. */
  get openPty(): PtyOpener {
    return remotePtyOpener(this.link, this.hub.log);
  }

  /** A folder for a new session: an existing directory under one of the runner's roots, as the runner sees it. */
  async checkWorkspace(workspace: string, options: { made?: boolean } = {}): Promise<string> {
    // Before the link: a name nobody enrolled must not leave a connection waiting for it.
    await this.hub.requireKnown(this.runner);
    const { path: real } = await this.link.call(
      { op: "checkWorkspace", path: workspace, ...(options.made ? { made: true } : {}) },
      { now: true },
    );
    return real;
  }

  async worktreesFolder(): Promise<string> {
    return (await this.link.call({ op: "worktreesFolder" }, this.options())).path;
  }

  resolve(workspace: string, input: string): Promise<ResolvedPath> {
    return this.link.call({ op: "resolve", workspace, input }, this.options());
  }

  stat(file: string): Promise<FileStat | null> {
    return this.link.call({ op: "stat", path: file }, this.options());
  }

  async readText(file: string): Promise<string | undefined> {
    return (await this.link.call({ op: "readText", path: file }, this.options())) ?? undefined;
  }

  resolvePage(workspace: string, input: string, request: PageRequest): Promise<ResolvedPage> {
    return this.link.call({ op: "resolvePage", workspace, input, ...request }, this.options());
  }

  async writeResolved(resolved: ResolvedPath, content: string): Promise<void> {
    await this.link.call({ op: "writeResolved", resolved, content }, this.options());
  }

  readDir(dir: string): Promise<DirEntry[]> {
    return this.link.call({ op: "readDir", path: dir }, this.options());
  }

  search(request: SearchRequest): Promise<SearchOutcome> {
    const { signal, ...rest } = request;
    return this.link.call({ op: "search", request: rest }, this.options(signal));
  }

  glob(root: string, pattern: string, signal: AbortSignal): Promise<GlobMatch[]> {
    return this.link.call({ op: "glob", root, pattern }, this.options(signal));
  }

  async workspacePrompt(workspace: string): Promise<WorkspacePromptFiles> {
    const files = await this.link.call({ op: "workspacePrompt", workspace }, this.options());
    return { ...files, template: files.template };
  }

  spawnStdio(spec: StdioSpec): Promise<StdioProcess> {
    return startRemoteStdio(this.link, spec, this.options());
  }

  async snapshots(workspace: string): Promise<SnapshotRepo> {
    return new RemoteSnapshots(this.link, workspace, this.options());
  }

  workspaceSkills(workspace: string): Promise<SkillView[]> {
    return this.link.call({ op: "skills.list", workspace }, this.options());
  }

  async exec(spec: ExecSpec): Promise<HostProcess> {
    const processId = randomUUID();
    const process = new RemoteProcess(this.link, processId, this.options());
    this.link.trackProcess(processId, {
      output: spec.onOutput,
      exit: (info) =>
        process.settle({ exit: { code: info.code, signal: info.signal }, leftoversStopped: info.leftoversStopped }),
      lost: (error) => process.lose(error),
    });
    try {
      const { pid } = await this.link.call(
        { op: "exec", processId, command: spec.command, cwd: spec.cwd, env: definedOnly(spec.env), stdin: spec.stdin },
        this.options(),
      );
      process.pid = pid;
    } catch (error) {
      this.link.forgetProcess(processId);
      throw error;
    }
    return process;
  }

  private options(signal?: AbortSignal) {
    return { fence: this.fence, signal };
  }
}

/** What a runner's host needs of the hub. */
export interface RemoteHostHub {
  /** The runner's connection (one per runner, made on first use). */
  link(runner: string): RunnerLink;
  log: (line: string) => void;
  /** Fails with `runner:not_found` for a runner that is not enrolled (or was revoked). */
  requireKnown(runner: string): Promise<void>;
}

type Finished = { exit: ExitInfo; leftoversStopped: boolean };

/** A command running on a runner: its exit arrives as `runner.exit`, or it is lost with the runner. */
class RemoteProcess implements HostProcess {
  pid = 0;
  private readonly finished: Promise<Finished>;
  private resolveFinished!: (value: Finished) => void;
  private rejectFinished!: (error: Error) => void;

  constructor(
    private readonly link: RunnerLink,
    private readonly processId: string,
    private readonly callOptions: { fence?: Fence },
  ) {
    this.finished = new Promise<Finished>((resolve, reject) => {
      this.resolveFinished = resolve;
      this.rejectFinished = reject;
    });
    // A command nobody waits on (stopped before finish was asked) must not be an unhandled rejection.
    this.finished.catch(() => undefined);
  }

  settle(value: Finished): void {
    this.resolveFinished(value);
  }

  lose(error: WorldlineError): void {
    this.rejectFinished(error);
  }

  finish(): Promise<Finished> {
    return this.finished;
  }

  async stop(graceMs?: number): Promise<void> {
    // A stop that cannot reach the runner has nothing more to do: the grace ends the command's wait.
    await this.link
      .call({ op: "stop", processId: this.processId, ...(graceMs === undefined ? {} : { graceMs }) }, this.callOptions)
      .catch(() => undefined);
    await this.finished.catch(() => undefined);
  }
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
