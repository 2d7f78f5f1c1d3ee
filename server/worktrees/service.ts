import type { SnapshotRepo } from "../checkpoints/types";
import { WorldlineError, errorMessage, type ErrorCode } from "../errors";
import type { WorkspaceHost } from "../host";
import type { ChangeStat, CreateSessionBody, Role } from "../protocol";
import type { EventLog, Session, Sessions } from "../sessions";
import * as store from "../store";
import { changeStat, diffOrigin } from "./changes";
import { addWorktree, planWorktree, removeWorktree } from "./create";
import { gitHostOf, type GitHost } from "./git";
import { setupCommand } from "./setup";

/** The terminals a worktree's setup runs in (server/pty's PtyManager). */
interface SetupTerminals {
  create(sessionId: string, input: { title?: string; command?: string }): Promise<{ terminalId: string }>;
  on(events: { closed?(info: { terminalId: string; sessionId: string }, exitCode: number | null): void }): () => void;
  closeSession(sessionId: string): Promise<void>;
}

export interface WorktreeDeps {
  db: store.Db;
  /**
   * The host of a session's workspace (server/host's WorkspaceHosts): this machine or a runner. Git,
   * file checks, the worktrees folder and the archive's snapshot all go through it, on its machine.
   */
  hosts: { of(runner: string | null): WorkspaceHost };
  sessions: Sessions;
  log: EventLog;
  terminals: SetupTerminals;
  /** One tool-less call of the session's model; null when no model is set (server/agent). */
  complete(sessionModel: string | null, system: string, user: string, signal: AbortSignal): Promise<string | null>;
  /** Starts a prompt in a session (server/team's TurnRouter): "Ask the agent to resolve". */
  prompt(sessionId: string, text: string): Promise<{ taskId: string }>;
}

/** A setup that never ends must not hold the first turn forever: past this the turn starts anyway, and says so. */
const SETUP_WAIT_MS = 15 * 60_000;
/** Diff stats wait this long after a step or turn ends, so a burst of steps costs one `git add -A`. */
const CHANGES_DEBOUNCE_MS = 300;

export type WorktreeRow = store.WorktreeRow;

/** A worktree session, its row, and the git of the machine that holds its worktree. */
export interface SessionWorktree {
  session: Session;
  row: WorktreeRow;
  host: GitHost;
}

/**
 * Worktree sessions: creation with `git worktree add`, the project's setup in a
 * terminal, and the cached diff stat the session list and the board read. Shipping (commit,
 * merge, push) and keeping (archive, restore) are in ship.ts and keep.ts, on top of this.
 */
export class WorktreeCore {
  /** Setups running here, by session: the first turn waits for its session's. */
  private readonly setups = new Map<string, { terminalId: string; done: Promise<void>; finish: () => void }>();
  private readonly pendingStats = new Map<string, NodeJS.Timeout>();
  /** Sessions known to have no worktree (most events are of those: one lookup each, once). */
  private readonly plain = new Set<string>();
  private readonly stops: (() => void)[] = [];
  /** Sessions with a commit, merge, push, archive or restore under way in this process. */
  private readonly busy = new Set<string>();

  constructor(readonly deps: WorktreeDeps) {
    this.stops.push(
      deps.terminals.on({ closed: (info, exitCode) => this.setupEnded(info.sessionId, info.terminalId, exitCode) }),
      deps.log.onEvery((sessionId, event, foreign) => {
        // The bridge that ran the step counts its changes; the others read the stored stat.
        if (!foreign && (event.type === "turn.completed" || event.type === "checkpoint.created"))
          this.scheduleChanges(sessionId);
      }),
    );
  }

  /** A session on a new worktree of the repository `workspace` is in; nothing is left on disk if it fails. */
  /** `role`: the person's who asks (server/sessions/placement.ts judges the repository's folder for them). */
  async create(body: CreateSessionBody, role?: Role): Promise<Session> {
    await this.deps.sessions.checkPlacement({ workspace: body.workspace, runner: body.runner, role });
    // On the machine that holds the repository: this one, or the runner's (its git, its WORLDLINE_HOME).
    const workspaceHost = this.deps.hosts.of(body.runner ?? null);
    const host = gitHostOf(workspaceHost);
    const folder = await workspaceHost.worktreesFolder();
    const plan = await planWorktree(host, { folder, workspace: body.workspace, ...pick(body) });
    await addWorktree(host, plan);
    let session: Session | undefined;
    try {
      const setup = await setupCommand(host, plan.path).catch((error: unknown) => error as Error);
      const { isolation: _isolation, base: _base, branch: _branch, ...rest } = body;
      session = await this.deps.sessions.create({ ...rest, workspace: plan.path, worktree: true });
      await store.createWorktree(this.deps.db, {
        sessionId: session.id,
        // Its real path, as the session's workspace (git records real paths too).
        path: session.workspace.path,
        branch: plan.branch,
        base: plan.base,
        repo: plan.repo,
        setup: setup === null ? null : "running",
      });
      if (setup instanceof Error) this.setupFailed(session.id, setup.message);
      else if (setup !== null) await this.startSetup(session.id, setup);
      return session;
    } catch (error) {
      if (session) await this.deps.sessions.remove(session.id).catch(() => undefined); // the original error is the one to report
      await removeWorktree(host, plan.repo, plan.path, plan.branch);
      throw error;
    }
  }

  async row(sessionId: string): Promise<WorktreeRow | null> {
    return store.getWorktree(this.deps.db, sessionId);
  }

  /** The session's worktree row, its folder present: `worktree:not_found` / `worktree:missing` otherwise. */
  async present(sessionId: string): Promise<SessionWorktree> {
    const found = await this.of(sessionId);
    const { session, row, host } = found;
    if (session.archived)
      throw new WorldlineError("worktree:missing", "This session is archived: restore it first (POST …/restore).");
    if (!(await host.stat(row.path)))
      throw new WorldlineError(
        "worktree:missing",
        `The worktree folder ${row.path} was deleted outside Worldline. Its branch ${row.branch} is kept; ` +
          "`worldline doctor` repairs git's record of it, and archive with force then restore brings the branch back.",
      );
    return found;
  }

  async of(sessionId: string): Promise<SessionWorktree> {
    const session = await this.deps.sessions.get(sessionId);
    const row = await this.row(sessionId);
    if (!row) throw new WorldlineError("worktree:not_found", "This session works in place: it has no worktree.");
    return { session, row, host: this.gitOf(session) };
  }

  /** The session's git and file checks, on the machine that holds its worktree (gitHostOf chooses how). */
  gitOf(session: Session): GitHost {
    return gitHostOf(this.deps.hosts.of(session.runner));
  }

  /** The checkpoints' shadow repository of the session's worktree, where the worktree is (a runner's own). */
  snapshots(session: Session): Promise<SnapshotRepo> {
    return this.deps.hosts.of(session.runner).snapshots(session.workspace.path);
  }

  /** Resolves once the session's setup has ended (or at once without one); see RuntimeDeps.ready. */
  async ready(sessionId: string, signal: AbortSignal): Promise<void> {
    const setup = this.setups.get(sessionId);
    if (!setup) return;
    this.deps.log.append(sessionId, {
      type: "notice",
      payload: { level: "info", text: "Waiting for the project's setup to finish (see its terminal)…" },
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETUP_WAIT_MS)));
    const aborted = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    await Promise.race([setup.done, late, aborted]);
    clearTimeout(timer);
  }

  /** Recounts the session's diff stat now; stores it, and tells every tab when it changed. */
  async refreshChanges(sessionId: string): Promise<ChangeStat | null> {
    const row = await this.row(sessionId);
    if (!row) {
      this.plain.add(sessionId);
      return null;
    }
    const host = this.gitOf(await this.deps.sessions.get(sessionId));
    if (!(await host.stat(row.path))) return null; // archived or vanished: the stored stat stands
    const origin = await diffOrigin(host, row);
    if (!origin) return null;
    const changes = await changeStat(host, row.path, origin);
    if (
      changes.files === row.changedFiles &&
      changes.additions === row.additions &&
      changes.deletions === row.deletions
    )
      return changes;
    await store.updateWorktree(this.deps.db, sessionId, {
      changedFiles: changes.files,
      additions: changes.additions,
      deletions: changes.deletions,
      changesAt: new Date(),
    });
    this.deps.log.append(sessionId, { type: "session.updated", payload: { changes } });
    return changes;
  }

  /** Runs one shipping or keeping operation of the session at a time here; another at once gets 409 `code`. */
  async exclusive<T>(sessionId: string, code: ErrorCode, task: () => Promise<T>): Promise<T> {
    if (this.busy.has(sessionId))
      throw new WorldlineError(
        code,
        "Another commit, merge, push or archive of this session is under way; try again when it ends.",
      );
    this.busy.add(sessionId);
    try {
      return await task();
    } finally {
      this.busy.delete(sessionId);
    }
  }

  notice(sessionId: string, level: "info" | "warning" | "error", text: string): void {
    this.deps.log.append(sessionId, { type: "notice", payload: { level, text } });
  }

  close(): void {
    for (const stop of this.stops) stop();
    for (const timer of this.pendingStats.values()) clearTimeout(timer);
    this.pendingStats.clear();
    for (const setup of this.setups.values()) setup.finish();
  }

  private scheduleChanges(sessionId: string): void {
    if (this.plain.has(sessionId)) return;
    clearTimeout(this.pendingStats.get(sessionId));
    const timer = setTimeout(() => {
      this.pendingStats.delete(sessionId);
      this.refreshChanges(sessionId).catch((error: unknown) =>
        // A stat is a glance: the next step recounts; the bridge log keeps why this one failed.
        console.error(`[worldline] counting the changes of session ${sessionId} failed: ${errorMessage(error)}`),
      );
    }, CHANGES_DEBOUNCE_MS);
    timer.unref();
    this.pendingStats.set(sessionId, timer);
  }

  private async startSetup(sessionId: string, command: string): Promise<void> {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const terminal = await this.deps.terminals.create(sessionId, { title: "Setup", command });
    this.setups.set(sessionId, { terminalId: terminal.terminalId, done, finish });
    this.deps.log.append(sessionId, { type: "session.updated", payload: { setup: "running" } });
    this.notice(sessionId, "info", `Running the project's setup: ${command}`);
  }

  private setupEnded(sessionId: string, terminalId: string, exitCode: number | null): void {
    const setup = this.setups.get(sessionId);
    if (!setup || setup.terminalId !== terminalId) return;
    this.setups.delete(sessionId);
    if (exitCode === 0) {
      void this.recordSetup(sessionId, "ok");
      this.notice(sessionId, "info", "The project's setup finished.");
    } else {
      this.setupFailed(sessionId, `it exited with ${exitCode === null ? "a signal" : `code ${exitCode}`}`);
    }
    setup.finish();
  }

  private setupFailed(sessionId: string, why: string): void {
    void this.recordSetup(sessionId, "failed");
    this.notice(
      sessionId,
      "error",
      `The project's setup failed: ${why}. The session is usable; fix the setup or run it again in a terminal.`,
    );
  }

  private async recordSetup(sessionId: string, setup: "ok" | "failed"): Promise<void> {
    await store
      .updateWorktree(this.deps.db, sessionId, { setup })
      .catch((error: unknown) => console.error(`[worldline] recording a setup's end failed: ${errorMessage(error)}`)); // shown already as a notice
    this.deps.log.append(sessionId, { type: "session.updated", payload: { setup } });
  }
}

function pick(body: CreateSessionBody): { base?: string; branch?: string; title?: string } {
  return { base: body.base, branch: body.branch, title: body.title };
}
