import type { CreateSessionBody, MergeStrategy, Role } from "../protocol";
import type { Session } from "../sessions";
import { Keeping } from "./keep";
import { WorktreeCore, type WorktreeDeps } from "./service";
import { Shipping } from "./ship";

/** Everything transport and the runtime ask of worktree sessions, in one object. */
export class Worktrees {
  private readonly core: WorktreeCore;
  private readonly shipping: Shipping;
  private readonly keeping: Keeping;

  constructor(deps: WorktreeDeps) {
    this.core = new WorktreeCore(deps);
    this.shipping = new Shipping(this.core);
    this.keeping = new Keeping(this.core);
  }

  create(body: CreateSessionBody, role?: Role): Promise<Session> {
    return this.core.create(body, role);
  }
  ready(sessionId: string, signal: AbortSignal): Promise<void> {
    return this.core.ready(sessionId, signal);
  }
  refreshChanges(sessionId: string) {
    return this.core.refreshChanges(sessionId);
  }
  commit(sessionId: string, input: { message?: string }) {
    return this.shipping.commit(sessionId, input);
  }
  merge(sessionId: string, input: { strategy: MergeStrategy }) {
    return this.shipping.merge(sessionId, input);
  }
  push(sessionId: string, input: { remote?: string }) {
    return this.shipping.push(sessionId, input);
  }
  resolve(sessionId: string) {
    return this.shipping.resolve(sessionId);
  }
  archive(sessionId: string, input: { force?: boolean }) {
    return this.keeping.archive(sessionId, input);
  }
  restore(sessionId: string) {
    return this.keeping.restore(sessionId);
  }
  /**
   * `PATCH /sessions/:id {archived}` of a worktree session: the same archive and restore as their
   * own routes (checkpoint, folder removed, branch kept; 409 `worktree:unmerged` unless forced).
   * False for a session in place, or one already as asked, which the plain update handles.
   */
  async setArchived(sessionId: string, archived: boolean, force: boolean): Promise<boolean> {
    if (!(await this.core.row(sessionId))) return false;
    if ((await this.core.deps.sessions.get(sessionId)).archived === archived) return false;
    if (archived) await this.keeping.archive(sessionId, { force });
    else await this.keeping.restore(sessionId);
    return true;
  }
  /** Before a session is deleted: refuses (409 `worktree:unmerged`) as archive does, unless forced. */
  beforeDelete(sessionId: string, force: boolean): Promise<void> {
    return this.keeping.beforeDelete(sessionId, force);
  }
  close(): void {
    this.core.close();
  }
}
