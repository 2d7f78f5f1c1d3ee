import fs from "node:fs/promises";
import path from "node:path";
import { readWorkspacePrompt } from "../agent/system-prompt";
import { defaultHome } from "../checkpoints";
import { errorMessage, isWorldlineError, WorldlineError } from "../errors";
import { WorkspaceFiles } from "../files";
import { LocalHost, type HostProcess, type ResolvedPath } from "../host";
import {
  PREVIEW_ONCE_ONLY,
  RunnerRequest,
  WORKSPACE_ONCE_ONLY,
  type RunnerOperation,
  type RunnerResponse,
} from "../protocol";
import { redactKnownValues, secretEnvValues } from "../secrets";
import { listSkills } from "../skills";
import { statOrNull } from "../stat-or-null";
import type { RootGuard } from "./guard";
import { RunnerSnapshots } from "./snapshots";
import { RunnerStdio, type StdioReplies } from "./stdio";
import { RunnerStreams, type StreamReplies } from "./streams";
import { RunnerTerminals } from "./terminals";

/**
 * Operations a hub may send again after a dropped connection that must not happen twice: their
 * (small) answers are remembered and sent again instead. The others are reads, safe to redo.
 */
const ONCE_ONLY = new Set<string>([
  "writeResolved",
  "exec",
  "stop",
  "files.write",
  "pty.open",
  "pty.input",
  "pty.kill",
  ...WORKSPACE_ONCE_ONLY,
  ...PREVIEW_ONCE_ONLY,
]);
/** Answers (or "running") of once-only requests remembered; a hub resends only what was in flight at a drop. */
const MAX_REMEMBERED_ANSWERS = 2_000;
/** Sessions whose last epoch the runner remembers; the oldest are forgotten past this. */
const MAX_REMEMBERED_EPOCHS = 10_000;
/** Sub-folders the folder picker shows at most. */
const MAX_PICKER_ENTRIES = 500;
/** Larger files are not sent whole (str_replace and write_file's diff read them); the hub's frame limit is above. */
const MAX_READ_TEXT_BYTES = 10 * 1024 * 1024;

/** The folder a runner makes its sessions' worktrees in, served beside its roots (client.ts gives it to the RootGuard). */
export function worktreesFolder(home: string): string {
  return path.join(home, "worktrees");
}

/**
 * How the runner talks back: answers, and the output and exit of commands it started. `route` is
 * the request's (server/protocol/runner.ts): the hub bridge they go back to, put on each frame.
 */
export interface RunnerReplies extends StdioReplies, StreamReplies {
  response(response: RunnerResponse): void;
  ptyData(ptyId: string, data: Buffer, route: string | undefined): void;
  ptyExit(ptyId: string, exitCode: number | null, route: string | undefined): void;
  filesChanged(root: string, paths: string[]): void;
}

/**
 * What a runner does for its hub: each request is parsed, checked against the runner's roots
 * and the session's epoch, and done with this machine's LocalHost. Commands keep running while
 * the hub is away; their output waits in the socket's buffer until it is back.
 */
export class RunnerWorker {
  private readonly host = new LocalHost();
  /** The IDE's view of the runner's folders (tree, editor, search, git markers), as on a hub's own machine. */
  readonly files = new WorkspaceFiles();
  private readonly epochs = new Map<string, number>();
  private readonly processes = new Map<string, HostProcess>();
  private readonly running = new Map<string, AbortController>();
  private readonly answered = new Map<string, RunnerResponse | "running">();
  private readonly terminals: RunnerTerminals;
  /** Terminals whose `pty.open` is under way (their folder being checked), by id. */
  private readonly opening = new Map<string, Promise<unknown>>();
  private readonly snapshots: RunnerSnapshots;
  private readonly stdio: RunnerStdio;
  private readonly streams: RunnerStreams;
  // The runner's own secrets (its environment) never leave it in command output.
  private readonly secrets = secretEnvValues(process.env);

  constructor(
    private readonly guard: RootGuard,
    private readonly replies: RunnerReplies,
    /** The runner's WORLDLINE_HOME: shadow repositories, forks and worktrees of its workspaces live there. */
    private readonly home: string = defaultHome(),
  ) {
    this.terminals = new RunnerTerminals({ data: replies.ptyData, exit: replies.ptyExit });
    this.snapshots = new RunnerSnapshots(home);
    this.stdio = new RunnerStdio(this.host, {
      output: (processId, chunk, route, stream) =>
        replies.output(processId, redactKnownValues(chunk, this.secrets), route, stream),
      exit: replies.exit,
      log: replies.log,
    });
    this.streams = new RunnerStreams(replies);
    this.files.onChange((root, paths) => replies.filesChanged(root, paths));
  }

  async handle(raw: unknown): Promise<void> {
    const parsed = RunnerRequest.safeParse(raw);
    if (!parsed.success) {
      const id = (raw as { id?: unknown } | null)?.id;
      this.replies.log(`refused a malformed request: ${parsed.error.issues[0]?.message ?? "invalid"}`);
      if (typeof id === "string" && id.length > 0 && id.length <= 64)
        this.replies.response({
          id,
          ok: false,
          error: { code: "runner:bad_request", message: "The runner could not parse the request." },
        });
      return;
    }
    const request = parsed.data;
    const { route } = request;
    const reply = (response: RunnerResponse) => this.replies.response(route ? { ...response, route } : response);
    const stale = this.staleEpoch(request.sessionId, request.epoch);
    if (stale !== undefined) {
      this.replies.log(`refused a request with stale epoch ${request.epoch} (seen ${stale}) for ${request.sessionId}`);
      reply({
        id: request.id,
        ok: false,
        error: {
          code: "runner:stale_epoch",
          message:
            `Session ${request.sessionId} was taken over by another Worldline bridge (its claim is at epoch ${stale}; ` +
            `this request came under epoch ${request.epoch}), so the runner refused it.`,
        },
      });
      return;
    }
    const once = ONCE_ONLY.has(request.operation.op);
    if (once) {
      const earlier = this.answered.get(request.id);
      // Sent again after a drop: answered again (still running: its answer comes when it is done).
      if (earlier) return earlier === "running" ? undefined : reply(earlier);
      this.answered.set(request.id, "running");
      if (this.answered.size > MAX_REMEMBERED_ANSWERS)
        this.answered.delete(this.answered.keys().next().value as string);
    }
    const response = await this.answer(request);
    if (once && this.answered.has(request.id)) this.answered.set(request.id, response);
    reply(response);
  }

  private async answer(request: RunnerRequest): Promise<RunnerResponse> {
    const controller = new AbortController();
    this.running.set(request.id, controller);
    try {
      const result = await this.perform(request.operation, controller.signal, request.route);
      return { id: request.id, ok: true, result: result ?? null };
    } catch (error) {
      const code = isWorldlineError(error) ? error.code : "runner:failed";
      const details = isWorldlineError(error) && error.details !== undefined ? { details: error.details } : {};
      if (code === "runner:outside_roots") this.replies.log(`refused: ${errorMessage(error)}`);
      return { id: request.id, ok: false, error: { code, message: errorMessage(error), ...details } };
    } finally {
      this.running.delete(request.id);
    }
  }

  /** Stops every command (the runner is shutting down). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.processes.values()].map((process) => process.stop()));
    this.streams.closeAll();
    await Promise.all([this.terminals.closeAll(), this.stdio.stopAll()]);
  }

  private staleEpoch(sessionId: string | undefined, epoch: number): number | undefined {
    if (!sessionId) return undefined;
    const seen = this.epochs.get(sessionId);
    if (seen !== undefined && epoch < seen) return seen;
    this.epochs.delete(sessionId);
    this.epochs.set(sessionId, epoch);
    if (this.epochs.size > MAX_REMEMBERED_EPOCHS) this.epochs.delete(this.epochs.keys().next().value as string);
    return undefined;
  }

  private async perform(operation: RunnerOperation, signal: AbortSignal, route: string | undefined): Promise<unknown> {
    const { guard, host } = this;
    switch (operation.op) {
      case "resolve":
        return this.resolveInRoots(operation.workspace, operation.input);
      case "resolvePage": {
        const { workspace, input, ...page } = operation;
        const resolved = await this.resolveInRoots(workspace, input);
        return { resolved, page: await host.readPage(resolved.real, page) };
      }
      case "stat":
        return host.stat(await guard.confine(operation.path));
      case "readText": {
        const file = await guard.confine(operation.path);
        const stat = await host.stat(file);
        if (stat && stat.size > MAX_READ_TEXT_BYTES)
          throw new WorldlineError(
            "runner:too_large",
            `${operation.path} is ${stat.size} bytes, too large to edit through a runner.`,
          );
        return host.readText(file);
      }
      case "writeResolved": {
        // The hub's `hardLinks` (its approval of a hard-linked file) is not taken: the guard decides.
        // `fresh` has none, so the write itself refuses a link made since this check.
        const fresh = await guard.confineWrite(operation.resolved.real);
        await host.writeResolved(fresh, operation.content);
        return null;
      }
      case "readDir":
        return host.readDir(await guard.confine(operation.path));
      case "search": {
        const root = await guard.confine(operation.request.root);
        return host.search({ ...operation.request, root, signal });
      }
      case "glob":
        return host.glob(await guard.confine(operation.root), operation.pattern, signal);
      case "exec":
        return this.exec(operation, route);
      case "stop":
        await this.processes.get(operation.processId)?.stop(operation.graceMs);
        return null;
      case "cancel":
        this.running.get(operation.requestId)?.abort();
        return null;
      case "workspacePrompt": {
        const workspace = await guard.confine(operation.workspace);
        const prompt = await readWorkspacePrompt(workspace);
        // AGENTS.md files above the roots (the repository's root) stay on this machine.
        const agentsMd = prompt.agentsMd.filter((file) => guard.contains(path.resolve(workspace, file.path)));
        return { ...prompt, agentsMd };
      }
      case "checkWorkspace":
        return { path: await this.workspace(operation.path, operation.made === true) };
      case "listFolders":
        return this.listFolders(operation.path);
      case "worktreesFolder":
        return { path: await this.guard.confine(worktreesFolder(this.home)) };
      case "files.list":
        return this.files.list(await this.folder(operation.root), operation.dir, operation.ignored === true);
      case "files.read":
        return this.files.read(await this.folder(operation.root), operation.path);
      case "files.write": {
        const { root, path: file, content, baseHash, force } = operation;
        return this.files.write(await this.folder(root), file, { content, baseHash, force });
      }
      case "files.search":
        return this.files.search(await this.folder(operation.root), operation.query, operation.limit);
      case "files.gitStatus":
        return this.files.gitStatus(await this.folder(operation.root));
      case "pty.open": {
        const { ptyId, ...spawn } = operation;
        // The hub sends the terminal's first input right behind its open: it waits for the folder check.
        const opened = this.folder(spawn.cwd).then((cwd) => ({
          pid: this.terminals.open(ptyId, { ...spawn, cwd }, route),
        }));
        this.opening.set(ptyId, opened);
        try {
          return await opened;
        } finally {
          this.opening.delete(ptyId);
        }
      }
      case "pty.input":
        await this.opened(operation.ptyId);
        this.terminals.input(operation.ptyId, operation.data);
        return null;
      case "pty.resize":
        await this.opened(operation.ptyId);
        this.terminals.resize(operation.ptyId, operation.cols, operation.rows);
        return null;
      case "pty.flow":
        await this.opened(operation.ptyId);
        this.terminals.flow(operation.ptyId, operation.paused);
        return null;
      case "pty.kill":
        await this.opened(operation.ptyId);
        await this.terminals.kill(operation.ptyId);
        return null;
      case "snapshots.snapshot":
      case "snapshots.diff":
      case "snapshots.changedSince":
      case "snapshots.restore":
      case "snapshots.fileAt":
      case "snapshots.readNow":
      case "snapshots.revert":
      case "snapshots.fork":
        return this.snapshots.perform(operation, await this.folder(operation.workspace));
      case "skills.list":
        return this.workspaceSkills(await this.folder(operation.workspace));
      case "stdio.open":
        return this.stdio.open({ ...operation, cwd: await this.folder(operation.cwd) }, route);
      case "stdio.write":
        this.stdio.write(operation.processId, operation.data);
        return null;
      case "stdio.stop":
        await this.stdio.stop(operation.processId);
        return null;
      case "ports.list":
        return this.streams.ports(operation.roots, this.ownPids());
      case "stream.open":
        return this.streams.open(operation.streamId, operation.port, route);
      case "stream.write":
        return this.streams.write(operation.streamId, operation.data);
      case "stream.flow":
        this.streams.flow(operation.streamId, operation.read);
        return null;
      case "stream.end":
        this.streams.end(operation.streamId);
        return null;
      case "stream.close":
        this.streams.close(operation.streamId);
        return null;
    }
  }

  private async exec(
    operation: Extract<RunnerOperation, { op: "exec" }>,
    route: string | undefined,
  ): Promise<{ pid: number }> {
    const cwd = await this.guard.confine(operation.cwd);
    const { processId } = operation;
    if (this.processes.has(processId))
      throw new WorldlineError("runner:bad_request", `Command ${processId} already runs.`);
    const process = await this.host.exec({
      command: operation.command,
      cwd,
      env: operation.env,
      stdin: operation.stdin,
      onOutput: (chunk) => this.replies.output(processId, redactKnownValues(chunk, this.secrets), route),
    });
    this.processes.set(processId, process);
    void process.finish().then(
      ({ exit, leftoversStopped }) => {
        this.processes.delete(processId);
        this.replies.exit(processId, { code: exit.code, signal: exit.signal, leftoversStopped }, route);
      },
      (error: unknown) => {
        this.processes.delete(processId);
        this.replies.log(`command ${processId} ended without an exit status: ${errorMessage(error)}`);
        this.replies.exit(processId, { code: null, signal: null, leftoversStopped: false }, route);
      },
    );
    return { pid: process.pid };
  }

  /** The processes this runner started for its hubs: its terminals' shells and its commands' groups. */
  private ownPids(): Set<number> {
    return new Set([...this.terminals.pids(), ...[...this.processes.values()].map((process) => process.pid)]);
  }

  /** The workspace's skills (the hub adds those of its own home); one linked in from outside the roots stays here. */
  private async workspaceSkills(workspace: string) {
    const skills = await listSkills({ workspace });
    const served = await Promise.all(
      skills.map((skill) =>
        this.guard.confine(skill.path).then(
          () => true,
          () => false,
        ),
      ),
    );
    return skills.filter((_, index) => served[index]);
  }

  /** Settles once a terminal being opened is open (or failed to), so what the hub sent after its open follows it. */
  private async opened(ptyId: string): Promise<void> {
    await this.opening.get(ptyId)?.catch(() => undefined); // the open's own caller gets its error
  }

  /** A path the model gave, resolved against a workspace under the roots; where it leads must be under them too. */
  private async resolveInRoots(workspace: string, input: string): Promise<ResolvedPath> {
    const resolved = await this.host.resolve(await this.guard.confine(workspace), input);
    if (!this.guard.contains(resolved.real)) await this.guard.confine(resolved.real);
    return resolved;
  }

  /** An existing folder under a root, as its real path. */
  private async folder(input: string): Promise<string> {
    if (!path.isAbsolute(input))
      throw new WorldlineError(
        "workspace:invalid",
        `The workspace must be an absolute path on the runner, got "${input}".`,
      );
    const real = await this.guard.confine(input);
    const stat = await statOrNull(real);
    if (!stat) throw new WorldlineError("workspace:invalid", `The folder "${input}" does not exist on the runner.`);
    if (!stat.isDirectory()) throw new WorldlineError("workspace:invalid", `"${input}" is a file, not a folder.`);
    return real;
  }

  /**
   * A folder for a new session. The runner's own forks and worktrees folders hold every session's forks
   * and worktrees: they are no workspace, and a fork or worktree in them is one only for the session it
   * was made for (`made`, the hub's word, as WORLDLINE_HOME's forks and worktrees are on the hub's machine).
   */
  private async workspace(input: string, made: boolean): Promise<string> {
    const real = await this.folder(input);
    const own = this.guard.ownFolderOf(real);
    if (own !== undefined && (real === own || !made))
      throw new WorldlineError(
        "workspace:forbidden",
        `${input} is in the runner's own ${path.basename(own)} folder (${own}); sessions open there only on a fork or worktree made for them. Choose a folder under the runner's roots.`,
      );
    return real;
  }

  private async listFolders(input: string | undefined) {
    const dir = await this.folder(input ?? this.guard.roots[0]);
    // The picker stays under the roots: the runner's forks folder is not for choosing.
    if (this.guard.rootOf(dir) === undefined)
      throw new WorldlineError("runner:outside_roots", `${input} is outside the folders this runner offers.`);
    const entries = await fs.readdir(dir, { withFileTypes: true });
    const folders = entries
      .filter((entry) => entry.isDirectory())
      .map((entry) => ({ name: entry.name, path: path.join(dir, entry.name) }))
      .sort((a, b) => Number(a.name.startsWith(".")) - Number(b.name.startsWith(".")) || a.name.localeCompare(b.name));
    const parent = path.dirname(dir);
    const atRoot = this.guard.roots.includes(dir);
    return {
      path: dir,
      parent: atRoot || parent === dir ? null : parent,
      entries: folders.slice(0, MAX_PICKER_ENTRIES),
    };
  }
}
