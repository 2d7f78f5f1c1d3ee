import * as z from "zod";

/** Memory, skills, conversations and the audit log over HTTP (server/transport/http validates with these). */

export const MemoryType = z.enum(["fact", "preference", "note", "lesson"]);
export type MemoryType = z.infer<typeof MemoryType>;

export const MemoryScope = z.enum(["global", "workspace", "session"]);
export type MemoryScope = z.infer<typeof MemoryScope>;

/** Who wrote it: the user (UI/API), the agent's `remember` tool, the post-turn policy, or reflection. */
export const MemorySource = z.enum(["user", "agent", "policy", "reflection"]);
export type MemorySource = z.infer<typeof MemorySource>;

export const MemoryView = z.object({
  id: z.string(),
  text: z.string(),
  type: MemoryType,
  scope: MemoryScope,
  workspace: z.string().nullable().describe("The workspace folder of a workspace-scoped memory"),
  session_id: z.string().nullable(),
  importance: z.number().int().min(1).max(5),
  source: MemorySource,
  created_at: z.string(),
});
export type MemoryView = z.infer<typeof MemoryView>;

export const CreateMemoryBody = z
  .object({
    text: z.string().trim().min(1).max(4000),
    type: MemoryType.default("note"),
    scope: MemoryScope.default("global"),
    workspace: z.string().max(4096).optional().describe("Required for scope workspace"),
    session_id: z.string().max(64).optional().describe("Required for scope session"),
    importance: z.number().int().min(1).max(5).default(3),
    source: MemorySource.default("user"),
  })
  .strict();
export type CreateMemoryBody = z.input<typeof CreateMemoryBody>;

export const MemoryQuery = z.object({
  scope: MemoryScope.optional(),
  type: MemoryType.optional(),
  workspace: z.string().max(4096).optional(),
  session_id: z.string().max(64).optional(),
  q: z.string().max(1000).optional().describe("Ranks by relevance to this text instead of newest first"),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});
export type MemoryQuery = z.infer<typeof MemoryQuery>;

export const DeleteMemoryQuery = z.object({ id: z.string().min(1).max(64) });

export const MemorySettings = z
  .object({
    /** The post-turn memory decision (rules, refined by a cheap model call when a model is set). */
    auto_memory: z.boolean(),
    /** After a completed task, a critic call stores a reusable lesson. Off by default. */
    reflection: z.boolean(),
  })
  .strict();
export type MemorySettings = z.infer<typeof MemorySettings>;
export const UpdateMemorySettingsBody = MemorySettings.partial().strict();

export const SkillView = z.object({
  name: z.string(),
  description: z.string(),
  path: z.string().describe("Absolute path of the SKILL.md"),
  source: z.enum(["workspace", "home"]),
});
export type SkillView = z.infer<typeof SkillView>;

export const SkillsQuery = z.object({ workspace: z.string().max(4096).optional() });

export const ConversationMessage = z.object({
  id: z.string(),
  task_id: z.string(),
  role: z.enum(["user", "assistant", "tool"]),
  content: z.string(),
  reasoning: z.string().optional(),
  tool: z.string().optional(),
  args: z.unknown().optional(),
  status: z
    .string()
    .describe("completed, streaming, cancelled, error, interrupted, pending, running, waiting_approval, …"),
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

export const ConversationView = z.object({
  id: z.string(),
  session_id: z.string(),
  title: z.string(),
  workspace: z.string(),
  messages: z.array(ConversationMessage),
});
export type ConversationView = z.infer<typeof ConversationView>;

export const AuditCommandView = z.object({
  id: z.number().int(),
  command: z.string().describe("Redacted: secrets and passwords never appear"),
  cwd: z.string(),
  risk_level: z.string(),
  action_type: z.string(),
  approved: z.boolean(),
  /** The rule or person that approved or rejected it (`rule: session deny shell rm *`, `yolo`, `web`). */
  decided_by: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number().int().nullable(),
  session_id: z.string().nullable(),
  task_id: z.string().nullable(),
  created_at: z.string(),
});
export type AuditCommandView = z.infer<typeof AuditCommandView>;

export const AuditQuery = z.object({
  session_id: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
