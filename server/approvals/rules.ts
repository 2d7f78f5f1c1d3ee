import { WorldlineError } from "../errors";
import type { CreateRuleBody, RuleView } from "../protocol";
import type { Sessions } from "../sessions";
import { resolveWorkspacePath } from "../sessions";
import * as store from "../store";
import { toRuleView } from "./views";

/** Stored allow / ask / deny rules: what the HTTP API and the rules tab edit. */
export class RuleBook {
  constructor(private readonly deps: { db: store.Db; sessions: Sessions }) {}

  async list(filter: { sessionId?: string } = {}): Promise<RuleView[]> {
    const workspaceId = filter.sessionId ? (await this.deps.sessions.get(filter.sessionId)).workspaceId : undefined;
    const rows = await store.listRules(this.deps.db, { sessionId: filter.sessionId, workspaceId });
    return rows.map(toRuleView);
  }

  async create(body: CreateRuleBody): Promise<RuleView> {
    const expiresAt = body.expires_at
      ? new Date(body.expires_at)
      : body.expires_in_seconds
        ? new Date(Date.now() + body.expires_in_seconds * 1000)
        : null;
    let sessionId: string | null = null;
    let workspaceId: string | null = null;
    if (body.scope === "session") {
      if (!body.session_id) throw new WorldlineError("rule:invalid", "A session rule needs session_id.");
      sessionId = (await this.deps.sessions.get(body.session_id)).id;
    } else if (body.scope === "workspace") {
      workspaceId = await this.workspaceId(body);
    }
    const row = await store.createRule(this.deps.db, {
      scope: body.scope,
      sessionId,
      workspaceId,
      tool: body.tool,
      pattern: body.pattern,
      action: body.action,
      expiresAt,
    });
    const [view] = (await store.listRules(this.deps.db, {})).filter((rule) => rule.id === row.id).map(toRuleView);
    return view;
  }

  async remove(id: string): Promise<void> {
    if (!(await store.deleteRule(this.deps.db, id)))
      throw new WorldlineError("rule:not_found", `No rule with id "${id}".`);
  }

  private async workspaceId(body: CreateRuleBody): Promise<string> {
    if (body.session_id) return (await this.deps.sessions.get(body.session_id)).workspaceId;
    if (!body.workspace)
      throw new WorldlineError("rule:invalid", "A workspace rule needs workspace (a folder path) or session_id.");
    const resolved = await resolveWorkspacePath(body.workspace);
    const workspace = await store.getWorkspaceByPath(this.deps.db, resolved);
    if (!workspace) throw new WorldlineError("rule:not_found", `No session was ever opened on ${resolved}.`);
    return workspace.id;
  }
}
