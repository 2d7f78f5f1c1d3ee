import * as z from "zod";

/**
 * Approval requests, decisions and rules as the HTTP API, the socket and the
 * /approvals page see them. Field names are snake_case because the public HTTP
 * API fixes them (its OpenAPI document: server/transport/http/openapi-docs.ts); the socket sends the same objects.
 */

export const RiskLevel = z.enum(["none", "low", "medium", "high"]);
export type RiskLevel = z.infer<typeof RiskLevel>;

export const ApprovalStatus = z.enum(["pending", "approved", "rejected", "interrupted", "cancelled"]);
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

export const ApprovalDecisionKind = z.enum(["allow_once", "allow_session", "reject"]);
export type ApprovalDecisionKind = z.infer<typeof ApprovalDecisionKind>;

export const ApprovalView = z.object({
  approval_id: z.string(),
  task_id: z.string().nullable(),
  session_id: z.string(),
  session_title: z.string(),
  workspace: z.string(),
  tool_call_id: z.string(),
  tool: z.string(),
  args: z.unknown(),
  description: z.string(),
  risk_level: RiskLevel,
  diff: z.string().nullable(),
  /** `password`: sudo asks for the user's password (never stored). */
  kind: z.enum(["tool", "password"]),
  /** The pattern "allow for this session" would record, while the request is pending. */
  scope: z.string().nullable(),
  status: ApprovalStatus,
  decision: z.string().nullable(),
  feedback: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  created_at: z.string(),
});
export type ApprovalView = z.infer<typeof ApprovalView>;

/** What a tab hears about the queue across all sessions (socket message `approvals.changed`). */
export const ApprovalChange = z.object({ change: z.enum(["requested", "decided"]), approval: ApprovalView });
export type ApprovalChange = z.infer<typeof ApprovalChange>;

export const ApprovalsQuery = z.object({
  status: z.enum(["pending", "approved", "rejected", "interrupted", "cancelled", "decided", "all"]).default("pending"),
  session_id: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});
export type ApprovalsQuery = z.infer<typeof ApprovalsQuery>;

export const DecideApprovalBody = z
  .object({
    decision: ApprovalDecisionKind,
    feedback: z.string().max(10_000).optional(),
  })
  .strict();
export type DecideApprovalBody = z.infer<typeof DecideApprovalBody>;

export const ContinueTaskBody = z
  .object({
    approval_id: z.string().min(1).max(64),
    /** Applied before resuming; omitted on a pending request means allow_once. */
    decision: ApprovalDecisionKind.optional(),
    feedback: z.string().max(10_000).optional(),
  })
  .strict();
export type ContinueTaskBody = z.infer<typeof ContinueTaskBody>;

export const PasswordTaskBody = z
  .object({
    approval_id: z.string().min(1).max(64),
    /** null declines (sudo then fails without running). */
    password: z.string().max(4096).nullable(),
  })
  .strict();
export type PasswordTaskBody = z.infer<typeof PasswordTaskBody>;

export const RuleAction = z.enum(["allow", "ask", "deny"]);
export type RuleAction = z.infer<typeof RuleAction>;

export const RuleScope = z.enum(["session", "workspace", "global"]);
export type RuleScope = z.infer<typeof RuleScope>;

export const RuleView = z.object({
  id: z.string(),
  scope: RuleScope,
  session_id: z.string().nullable(),
  workspace_id: z.string().nullable(),
  workspace: z.string().nullable(),
  tool: z.string(),
  pattern: z.string(),
  action: RuleAction,
  expires_at: z.string().nullable(),
  created_at: z.string(),
});
export type RuleView = z.infer<typeof RuleView>;

export const CreateRuleBody = z
  .object({
    tool: z.string().min(1).max(200).describe('Tool name or glob, e.g. "shell", "write_file", "*"'),
    pattern: z.string().min(1).max(4096).describe('Glob over the command or path, e.g. "git status*", "src/**", "*"'),
    action: RuleAction,
    scope: RuleScope.default("global"),
    session_id: z.string().max(64).optional(),
    /** For workspace scope: the folder path (or give session_id and its workspace is used). */
    workspace: z.string().max(4096).optional(),
    expires_at: z.iso.datetime({ offset: true }).optional(),
    expires_in_seconds: z
      .number()
      .int()
      .positive()
      .max(10 * 365 * 24 * 3600)
      .optional(),
  })
  .strict();
export type CreateRuleBody = z.infer<typeof CreateRuleBody>;

export const RulesQuery = z.object({ session_id: z.string().max(64).optional() });
