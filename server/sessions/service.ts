import type { SessionMode, SessionSummary } from "../protocol";
import { WorldlineError } from "../errors";
import * as store from "../store";
import type { EventLog } from "./event-log";
import type { Role } from "../protocol";
import type { WorkspacePlacement } from "./placement";
import { resolveWorkspacePath } from "./workspace-path";
import { fleetViews, type FleetView } from "./state";

export type Session = store.SessionRow;

/**
 * Checks a folder for a new session where it is: its host's `checkWorkspace` (server/host), this
 * machine's (`runner` null) or a runner's. Its real path, or a `workspace:*` / `runner:*` error.
 */
export type WorkspaceCheck = (
  runner: string | null,
  workspace: string,
  options?: WorkspaceCheckOptions,
) => Promise<string>;

/** `made`: a folder the bridge (or runner) made for this session, a fork's or a worktree's. */
export interface WorkspaceCheckOptions {
  made?: boolean;
}

/** Sessions built without hosts (tests) know this machine only. */
const thisMachineOnly: WorkspaceCheck = async (runner, workspace) => {
  if (runner !== null) throw new WorldlineError("runner:not_found", "This bridge has no runners.");
  return resolveWorkspacePath(workspace);
};

/** Sessions: creation on a folder, lookup, settings. Every change is also an event. */
export class Sessions {
  constructor(
    private readonly db: store.Db,
    private readonly log: EventLog,
    private readonly checkWorkspace: WorkspaceCheck = thisMachineOnly,
    /** Where sessions may run on this machine (server/sessions/placement.ts); none: anywhere (tests). */
    private readonly placement?: WorkspacePlacement,
  ) {}

  async create(input: {
    workspace: string;
    yolo?: boolean;
    title?: string;
    model?: string | null;
    parentId?: string;
    forkCheckpointId?: string;
    agentCommand?: string;
    /** The runner whose machine holds `workspace`; absent = this machine. */
    runner?: string;
    /** The role of the person asking; absent for the hub's operator and the bridge itself. */
    role?: Role;
    /** The workspace is a worktree the bridge made (server/worktrees), after `checkPlacement` of its repository. */
    worktree?: boolean;
  }): Promise<Session> {
    const { role: _role, worktree, ...fields } = input;
    const workspace = await this.checkPlacement({
      ...input,
      made: input.forkCheckpointId !== undefined || worktree === true,
    });
    const session = await store.createSession(this.db, { ...fields, workspace });
    this.log.openNew(session.id);
    this.log.append(session.id, {
      type: "session.updated",
      payload: { title: session.title, yolo: session.yolo, model: session.model, status: "idle" },
    });
    return session;
  }

  /** The folder's real path when a session may run there for `role` (server/sessions/placement.ts); else throws. */
  async checkPlacement(input: {
    workspace: string;
    runner?: string;
    role?: Role;
    agentCommand?: string;
    made?: boolean;
  }): Promise<string> {
    const workspace = await this.checkWorkspace(input.runner ?? null, input.workspace, { made: input.made ?? false });
    this.placement?.check({
      runner: input.runner ?? null,
      workspace,
      role: input.role,
      agentCommand: input.agentCommand,
      made: input.made ?? false,
    });
    return workspace;
  }

  async get(id: string): Promise<Session> {
    // The log is opened (and caught up with other processes' appends) while the row is read.
    const [session] = await Promise.all([store.getSession(this.db, id), this.log.open(id)]);
    if (!session) {
      this.log.release(id);
      throw new WorldlineError("session:not_found", `No session with id "${id}".`);
    }
    return session;
  }

  list(options?: { includeArchived?: boolean }): Promise<Session[]> {
    return store.listSessions(this.db, options);
  }

  async update(
    id: string,
    patch: {
      title?: string;
      yolo?: boolean;
      model?: string | null;
      archived?: boolean;
      mode?: SessionMode;
      /** USD; what one "allow" past it adds is this size (server/budgets). */
      budget_usd?: number | null;
      budget_tokens?: number | null;
    },
  ): Promise<Session> {
    await this.get(id);
    const { budget_usd, budget_tokens, ...rest } = patch;
    const budget = {
      ...(budget_usd !== undefined ? { budgetUsd: budget_usd, budgetStepUsd: budget_usd } : {}),
      ...(budget_tokens !== undefined ? { budgetTokens: budget_tokens } : {}),
    };
    const session = await store.updateSession(this.db, id, { ...rest, ...budget });
    const told = budget_usd !== undefined ? { ...rest, budget_usd } : rest;
    if (Object.keys(told).length > 0) this.log.append(id, { type: "session.updated", payload: told });
    return session;
  }

  /**
   * The session list's status, and its `session.updated` event. With `claim` (a turn's), only while
   * the session is at the claim's epoch: a stale bridge gets `session:fenced` and writes neither.
   */
  async setStatus(id: string, status: "idle" | "running" | "interrupted", claim?: { epoch: number }): Promise<void> {
    if (!(await store.setSessionStatus(this.db, id, status, claim)))
      throw new WorldlineError("session:not_found", `No session with id "${id}".`);
    this.log.append(id, { type: "session.updated", payload: { status } });
  }

  async remove(id: string): Promise<void> {
    await this.get(id);
    await this.log.flush();
    await store.deleteSession(this.db, id);
  }

  /** Ids of sessions whose title or conversation mentions `text`. */
  search(text: string): Promise<string[]> {
    return store.searchSessionIds(this.db, text);
  }

  /** Recent folders; `visible` (a person's sessions) keeps only the folders of those sessions. */
  async recentWorkspaces(
    visible?: Set<string> | null,
  ): Promise<{ path: string; name: string; last_opened_at: string }[]> {
    const rows = await store.listRecentWorkspaces(this.db, undefined, visible ?? undefined);
    return rows.map((row) => ({ path: row.path, name: row.name, last_opened_at: row.lastOpenedAt.toISOString() }));
  }

  async summary(session: Session): Promise<SessionSummary> {
    return (await this.summaries([session]))[0];
  }

  /** Summaries of many sessions, their worktrees and states read in one go (the session list). */
  async summaries(sessions: Session[]): Promise<SessionSummary[]> {
    const views = await fleetViews(this.db, sessions);
    return Promise.all(sessions.map((session) => this.summaryWith(session, views.get(session.id))));
  }

  /** Worktree, board state and changes of sessions (the board's cards). */
  fleet(sessions: Session[]): Promise<Map<string, FleetView>> {
    return fleetViews(this.db, sessions);
  }

  private async summaryWith(session: Session, view: FleetView | undefined): Promise<SessionSummary> {
    await this.log.open(session.id);
    return {
      id: session.id,
      title: session.title,
      workspace: session.workspace.path,
      runner: session.runner ?? null,
      yolo: session.yolo,
      model: session.model,
      mode: session.mode === "plan" ? "plan" : "default",
      status: session.status,
      archived: session.archived,
      created_at: session.createdAt.toISOString(),
      updated_at: session.updatedAt.toISOString(),
      last_seq: this.log.lastSeq(session.id),
      cost_usd: (await this.usage(session.id)).cost_usd,
      budget_usd: session.budgetUsd,
      budget_tokens: session.budgetTokens,
      worktree: view?.worktree ?? null,
      state: view?.state ?? (session.archived ? "archived" : "idle"),
      changes: view?.changes ?? null,
    };
  }

  /** Input, cached-input and output tokens and cost over the session's turns (README.md, Prompt caching and cost). */
  usage(sessionId: string): Promise<store.SessionUsage> {
    return store.sessionUsage(this.db, sessionId);
  }

  /** How the last turn's last model step ended (the public `stop_reason`); null before any. */
  lastStopReason(sessionId: string): Promise<string | null> {
    return store.lastStopReason(this.db, sessionId);
  }
}
