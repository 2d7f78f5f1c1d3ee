import * as z from "zod";
import {
  AccessView,
  ArchiveBody,
  CommitBody,
  CommitResult,
  MergeBody,
  MergeResult,
  PushBody,
  PushResult,
  ApprovalsQuery,
  ApprovalView,
  ChatStreamBody,
  CheckpointDiff,
  CheckpointSettings,
  CheckpointView,
  ContinueTaskBody,
  CreatedShareLink,
  CreateRuleBody,
  CreateSessionBody,
  CreateShareLinkBody,
  DecideApprovalBody,
  DefaultModelBody,
  DirectoryListing,
  DirectoryQuery,
  EventsQuery,
  FileContent,
  FileQuery,
  FileSearchQuery,
  FileTreeListing,
  FileTreeQuery,
  ForkBody,
  ForkResult,
  ReviewActionBody,
  ReviewChanges,
  ReviewQuery,
  ReviewRevertResult,
  GenerationStats,
  StopReason,
  GitStatus,
  Health,
  IdeLayout,
  PasswordTaskBody,
  RewindBody,
  RewindResult,
  RulesQuery,
  RuleView,
  SaveProviderBody,
  SessionSummary,
  SessionUsageView,
  SettingsView,
  ShareLinkView,
  TestConnectionBody,
  TestConnectionResult,
  UndoBody,
  UpdateSessionBody,
  WriteFileBody,
} from "../../protocol";
import type { RouteDoc } from "./router";

/** The public SSE event names, fixed for clients (server/transport/http/sse-map.ts produces them). */
export const SSE_EVENT_NAMES = [
  "runtime_status",
  "reasoning_delta",
  "content_delta",
  "tool_call_started",
  "tool_call_finished",
  "tool_approval_requested",
  "tool_password_requested",
  "memory_policy_decision",
  "memory_stored",
  "reflection_completed",
  "retry",
  "error",
  "done",
] as const;

const StoredEvent = z.object({ seq: z.number().int(), type: z.string(), payload: z.unknown(), created_at: z.string() });
export const SseEvent = z.object({
  event: z.enum(SSE_EVENT_NAMES),
  data: z
    .object({
      task_id: z.string(),
      session_id: z.string().optional(),
      conversation_id: z.string().optional(),
      stage: z.string().optional(),
      delta: z.string().optional(),
      tool_call_id: z.string().optional(),
      tool: z.string().optional(),
      args: z.unknown().optional(),
      output: z.string().optional(),
      is_error: z.boolean().optional(),
      approval_id: z.string().optional(),
      risk_level: z.string().optional(),
      status: z.string().optional(),
      generation_stats: GenerationStats.nullable().optional(),
      stop_reason: StopReason.nullable().optional(),
    })
    .loose(),
});
const Ok = z.object({}).loose();
const sessions = ["sessions"];
const files = ["files"];
const settings = ["settings"];
const approvals = ["approvals"];
const checkpoints = ["checkpoints"];

/**
 * Descriptions of routes that carry no `doc` of their own, keyed "METHOD path",
 * pointing at the same zod schemas the handlers validate with. A route missing from
 * both still appears in the document, with a generic description.
 */
export const DOCS: Record<string, RouteDoc> = {
  "GET /api/v1/health": { summary: "Liveness and version (no token needed)", tags: ["bridge"], response: Health },
  "GET /api/v1/csrf": {
    summary: "The CSRF token cookie-authenticated pages send with state changes",
    tags: ["bridge"],
    response: z.object({ csrf: z.string() }),
  },
  "GET /api/v1/sessions": {
    summary: "List sessions (`?archived=1` includes archived ones)",
    tags: sessions,
    response: z.array(SessionSummary),
  },
  "POST /api/v1/sessions": {
    summary: "Create a session on a workspace folder",
    tags: sessions,
    body: CreateSessionBody,
    response: SessionSummary,
  },
  "GET /api/v1/sessions/:id": {
    summary: "A session, with its running task id",
    tags: sessions,
    response: SessionSummary.extend({
      running_task_id: z.string().nullable(),
      usage: SessionUsageView,
      stop_reason: StopReason.nullable(),
    }),
  },
  "PATCH /api/v1/sessions/:id": {
    summary:
      "Change yolo, title, model, archived or mode (`plan`: read, search and propose a plan only); archiving a worktree session removes its folder as POST …/archive does (409 worktree:unmerged unless `?force=1`)",
    tags: sessions,
    body: UpdateSessionBody,
    response: SessionSummary,
  },
  "DELETE /api/v1/sessions/:id": { summary: "Delete a session", tags: sessions, response: Ok },
  "POST /api/v1/sessions/:id/cancel": {
    summary: "Cancel the running turn",
    tags: sessions,
    response: z.object({ cancelled: z.boolean() }),
  },
  "POST /api/v1/sessions/:id/commit": {
    summary: "Commit a worktree session's changes on its branch (no message: the session's model writes one)",
    tags: sessions,
    body: CommitBody,
    response: CommitResult,
  },
  "POST /api/v1/sessions/:id/merge": {
    summary:
      "Merge a worktree session's branch into its base (409 merge:conflict with `paths`, merge:dirty, merge:base_moved)",
    tags: sessions,
    body: MergeBody,
    response: MergeResult,
  },
  "POST /api/v1/sessions/:id/push": {
    summary: "Push a worktree session's branch, with a compare URL for GitHub, GitLab and Bitbucket",
    tags: sessions,
    body: PushBody,
    response: PushResult,
  },
  "POST /api/v1/sessions/:id/resolve": {
    summary: "Merge the base into the worktree and, on conflicts, ask the agent to resolve them",
    tags: sessions,
    response: z.object({ conflicts: z.array(z.string()), task_id: z.string().nullable(), sha: z.string().nullable() }),
  },
  "POST /api/v1/sessions/:id/archive": {
    summary: "Snapshot and remove a worktree session's folder, keeping its branch (409 worktree:unmerged unless force)",
    tags: sessions,
    body: ArchiveBody,
    response: z.object({ archived: z.literal(true), snapshot: z.string().nullable() }),
  },
  "POST /api/v1/sessions/:id/restore": {
    summary: "Bring an archived worktree back from its branch and snapshot, byte for byte",
    tags: sessions,
    response: z.object({ restored: z.literal(true), path: z.string() }),
  },
  "GET /api/v1/sessions/:id/events": {
    summary: "The session's ordered event log after `after`",
    tags: sessions,
    query: EventsQuery,
    response: z.array(StoredEvent),
  },
  "GET /api/v1/sessions-search": {
    summary: "Sessions whose title or content mention `q`",
    tags: sessions,
    query: z.object({ q: z.string().max(200).optional() }),
  },
  "GET /api/v1/workspaces/recent": { summary: "Recently opened workspace folders", tags: sessions },
  "GET /api/v1/fs/directories": {
    summary: "Folders under a path, to pick a workspace",
    tags: files,
    query: DirectoryQuery,
    response: DirectoryListing,
  },
  "POST /api/v1/chat/stream": {
    summary: "Run a task and stream its events (ends at done or at a request for a human)",
    tags: ["chat"],
    body: ChatStreamBody,
    sse: true,
  },
  "POST /api/v1/tasks/:task_id/continue/stream": {
    summary: "Decide a waiting approval and stream the rest of the task",
    tags: ["chat"],
    body: ContinueTaskBody,
    sse: true,
  },
  "POST /api/v1/tasks/:task_id/password/stream": {
    summary: "Give the password a sudo command waits for and stream the rest of the task",
    tags: ["chat"],
    body: PasswordTaskBody,
    sse: true,
  },
  "GET /api/v1/tasks/:task_id/events": {
    summary: "The task's ordered events",
    tags: ["chat"],
    response: z.array(StoredEvent),
  },
  "GET /api/v1/approvals": {
    summary: "Approval requests (e.g. `?status=pending`)",
    tags: approvals,
    query: ApprovalsQuery,
    response: z.array(ApprovalView),
  },
  "GET /api/v1/approvals/:id": { summary: "One approval request", tags: approvals, response: ApprovalView },
  "POST /api/v1/approvals/:id": {
    summary: "Decide an approval request (409 when already decided)",
    tags: approvals,
    body: DecideApprovalBody,
    response: ApprovalView,
  },
  "GET /api/v1/rules": { summary: "Approval rules", tags: approvals, query: RulesQuery, response: z.array(RuleView) },
  "POST /api/v1/rules": {
    summary: "Create an approval rule",
    tags: approvals,
    body: CreateRuleBody,
    response: RuleView,
  },
  "DELETE /api/v1/rules/:id": { summary: "Delete an approval rule", tags: approvals, response: Ok },
  "GET /api/v1/sessions/:id/checkpoints": {
    summary: "Checkpoints, oldest first, with changed files",
    tags: checkpoints,
    response: z.array(CheckpointView),
  },
  "GET /api/v1/sessions/:id/checkpoints/:cid/diff": {
    summary: "The diff a rewind to this checkpoint would apply",
    tags: checkpoints,
    response: CheckpointDiff,
  },
  "POST /api/v1/sessions/:id/rewind": {
    summary: "Rewind conversation and/or files (409 on outside edits unless force)",
    tags: checkpoints,
    body: RewindBody,
    response: RewindResult,
  },
  "POST /api/v1/sessions/:id/rewind/undo": {
    summary: "Undo the last rewind",
    tags: checkpoints,
    body: UndoBody,
    response: RewindResult,
  },
  "POST /api/v1/sessions/:id/undo": {
    summary: "Undo the last turn",
    tags: checkpoints,
    body: UndoBody,
    response: RewindResult,
  },
  "POST /api/v1/sessions/:id/fork": {
    summary: "Fork the session at a checkpoint",
    tags: checkpoints,
    body: ForkBody,
    response: ForkResult,
  },
  "GET /api/v1/sessions/:id/changes": {
    summary: "Review: files and hunks changed since a base (`start` or a checkpoint), with what was accepted",
    tags: checkpoints,
    query: ReviewQuery,
    response: ReviewChanges,
  },
  "POST /api/v1/sessions/:id/changes/accept": {
    summary: "Mark a hunk, a file or (no path) every file reviewed against the base",
    tags: checkpoints,
    body: ReviewActionBody,
    response: ReviewChanges,
  },
  "POST /api/v1/sessions/:id/changes/revert": {
    summary: "Put a hunk or a file back as it was at the base (undo with POST …/rewind/undo)",
    tags: checkpoints,
    body: ReviewActionBody,
    response: ReviewRevertResult,
  },
  "GET /api/v1/sessions/:id/checkpoint-settings": {
    summary: "Checkpoint settings of the session",
    tags: checkpoints,
    response: CheckpointSettings,
  },
  "PATCH /api/v1/sessions/:id/checkpoint-settings": {
    summary: "Change checkpoint settings",
    tags: checkpoints,
    body: CheckpointSettings.partial(),
    response: CheckpointSettings,
  },
  "GET /api/v1/sessions/:id/files/tree": {
    summary: "A folder of the workspace",
    tags: files,
    query: FileTreeQuery,
    response: FileTreeListing,
  },
  "GET /api/v1/sessions/:id/files/content": {
    summary: "A file's content",
    tags: files,
    query: FileQuery,
    response: FileContent,
  },
  "PUT /api/v1/sessions/:id/files/content": {
    summary: "Write a file (409 on a conflicting edit)",
    tags: files,
    body: WriteFileBody,
    response: FileContent,
  },
  "GET /api/v1/sessions/:id/files/search": { summary: "Fuzzy file search", tags: files, query: FileSearchQuery },
  "GET /api/v1/sessions/:id/files/git": {
    summary: "Git status markers of the workspace",
    tags: files,
    response: GitStatus,
  },
  "GET /api/v1/sessions/:id/mcp": { summary: "MCP servers of the session and their state", tags: ["tools"] },
  "GET /api/v1/settings": {
    summary: "Providers, models and the default model (keys never included)",
    tags: settings,
    response: SettingsView,
  },
  "POST /api/v1/settings/providers": {
    summary: "Add or change a provider",
    tags: settings,
    body: SaveProviderBody,
    response: SettingsView,
  },
  "DELETE /api/v1/settings/providers/:providerId": {
    summary: "Remove a provider",
    tags: settings,
    response: SettingsView,
  },
  "PUT /api/v1/settings/default-model": {
    summary: "Set the default model",
    tags: settings,
    body: DefaultModelBody,
    response: SettingsView,
  },
  "POST /api/v1/settings/test-connection": {
    summary: "Test a provider connection",
    tags: settings,
    body: TestConnectionBody,
    response: TestConnectionResult,
  },
  "GET /api/v1/settings/layout": {
    summary: "The IDE layout",
    tags: settings,
    response: z.object({ layout: IdeLayout.nullable() }),
  },
  "PUT /api/v1/settings/layout": {
    summary: "Save the IDE layout",
    tags: settings,
    body: IdeLayout,
    response: z.object({ layout: IdeLayout }),
  },
  "GET /api/v1/access": {
    summary: "What the caller may do (owner, or a share link's scope)",
    tags: ["sharing"],
    response: AccessView,
  },
  "GET /api/v1/sessions/:id/share-links": {
    summary: "Share links of a session",
    tags: ["sharing"],
    response: z.array(ShareLinkView),
  },
  "POST /api/v1/sessions/:id/share-links": {
    summary: "Create a share link",
    tags: ["sharing"],
    body: CreateShareLinkBody,
    response: CreatedShareLink,
  },
  "DELETE /api/v1/sessions/:id/share-links/:linkId": {
    summary: "Revoke a share link",
    tags: ["sharing"],
    response: Ok,
  },
};

export type JsonSchema = Record<string, unknown>;
