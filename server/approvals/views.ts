import type { ApprovalView, RuleView } from "../protocol";
import type * as store from "../store";

/** Key under which a password request keeps its prompt in `args`: it never holds the password itself. */
export const PASSWORD_PROMPT_KEY = "password_prompt";

export function toApprovalView(row: store.ApprovalRow, scope: string | null = null): ApprovalView {
  const args = parseJson(row.args);
  const password = typeof args === "object" && args !== null && PASSWORD_PROMPT_KEY in args;
  return {
    approval_id: row.id,
    task_id: row.turnId,
    session_id: row.sessionId,
    session_title: row.session.title,
    workspace: row.session.workspace.path,
    tool_call_id: row.toolCallId,
    tool: row.tool,
    args,
    description: row.description,
    risk_level: toRisk(row.riskLevel),
    diff: row.diff,
    kind: password ? "password" : "tool",
    scope: row.status === "pending" ? scope : null,
    status: row.status as ApprovalView["status"],
    decision: row.decision,
    feedback: row.feedback,
    decided_by: row.decidedBy,
    decided_at: row.decidedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

export function toRuleView(row: Awaited<ReturnType<typeof store.listRules>>[number]): RuleView {
  return {
    id: row.id,
    scope: row.scope as RuleView["scope"],
    session_id: row.sessionId,
    workspace_id: row.workspaceId,
    workspace: row.workspacePath,
    tool: row.tool,
    pattern: row.pattern,
    action: row.action as RuleView["action"],
    expires_at: row.expiresAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

function toRisk(value: string): ApprovalView["risk_level"] {
  return value === "none" || value === "low" || value === "high" ? value : "medium";
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // not JSON: shown as the text it is
    return text;
  }
}
