import * as z from "zod";
import { ChangeStat, SessionIsolation, SessionState, WorktreeInfo } from "./fleet";

/** Bodies and queries of the public HTTP API (server/transport/http validates with these). */

/** `plan`: the agent may only read, search and run read-only commands until its plan is approved. */
export const SessionMode = z.enum(["default", "plan"]);
export type SessionMode = z.infer<typeof SessionMode>;

export const CreateSessionBody = z
  .object({
    workspace: z.string().min(1).max(4096).describe("Absolute path of an existing folder"),
    yolo: z.boolean().optional(),
    title: z.string().max(200).optional(),
    model: z.string().max(200).optional(),
    agentCommand: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe("Run an external ACP agent (a shell command line) instead of Worldline's own loop"),
    runner: z
      .string()
      .min(1)
      .max(63)
      .optional()
      .describe("A connected runner's name: `workspace` is then a folder under one of its roots, on its machine"),
    isolation: SessionIsolation.optional().describe(
      "`worktree`: the session works in a new git worktree of the repository `workspace` is in; default `none`",
    ),
    base: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe("The ref the worktree starts from; default the repository's HEAD"),
    branch: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("The worktree's branch name; default `worldline/<slug of the title>-<id>`"),
  })
  .strict();
export type CreateSessionBody = z.infer<typeof CreateSessionBody>;

export const UpdateSessionBody = z
  .object({
    yolo: z.boolean().optional(),
    title: z.string().min(1).max(200).optional(),
    model: z.string().max(200).nullable().optional(),
    archived: z.boolean().optional(),
    mode: SessionMode.optional(),
    /** Spend limit in USD for the session's turns; null removes it. */
    budget_usd: z.number().finite().min(0).max(1_000_000).nullable().optional(),
    /** Token limit, for a model with no known price; null removes it. */
    budget_tokens: z.number().int().min(0).nullable().optional(),
  })
  .strict();
export type UpdateSessionBody = z.infer<typeof UpdateSessionBody>;

export const EventsQuery = z.object({ after: z.coerce.number().int().min(0).default(0) });

export const ChatStreamBody = z
  .object({
    message: z.string().min(1).max(200_000),
    session_id: z.string().max(64).optional(),
    workspace: z.string().max(4096).optional(),
    reasoning: z.enum(["on", "off"]).optional(),
    yolo: z.boolean().optional(),
    /** Switches the session's mode before the message is sent. */
    mode: SessionMode.optional(),
  })
  .strict();
export type ChatStreamBody = z.infer<typeof ChatStreamBody>;

export const SessionSummary = z.object({
  id: z.string(),
  title: z.string(),
  workspace: z.string(),
  /** The runner whose machine holds the workspace; null = the bridge's own machine. */
  runner: z.string().nullable().optional(),
  yolo: z.boolean(),
  model: z.string().nullable(),
  mode: SessionMode,
  status: z.string(),
  archived: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  last_seq: z.number().int(),
  /** What the session's turns cost so far at the models' prices; null until one is known. */
  cost_usd: z.number().nullable().optional(),
  /** The session's spend limit in USD (server/budgets); null = none. */
  budget_usd: z.number().nullable().optional(),
  budget_tokens: z.number().nullable().optional(),
  /** The session's own git worktree; null for a session in place. Always sent by the bridge. */
  worktree: WorktreeInfo.nullable().optional(),
  /** The board's column. Always sent by the bridge. */
  state: SessionState.optional(),
  /** Diff stat against the worktree's base, committed or not; null without a worktree. Always sent by the bridge. */
  changes: ChangeStat.nullable().optional(),
});
export type SessionSummary = z.infer<typeof SessionSummary>;

/** `GET /sessions/:id`'s `usage`: tokens over the session's turns and their cost (null while unknown). */
export const SessionUsageView = z.object({
  input_tokens: z.number(),
  cached_input_tokens: z.number().nullable(),
  output_tokens: z.number(),
  cost_usd: z.number().nullable(),
});

export const DirectoryListing = z.object({
  path: z.string(),
  parent: z.string().nullable(),
  entries: z.array(z.object({ name: z.string(), path: z.string() })),
});
export type DirectoryListing = z.infer<typeof DirectoryListing>;

export const DirectoryQuery = z.object({ path: z.string().max(4096).optional() });

export const Health = z.object({
  ok: z.literal(true),
  version: z.string(),
  /** Errors nothing caught since the bridge started; it kept serving through them. */
  errors: z.object({ unhandled_rejections: z.number().int(), uncaught_exceptions: z.number().int() }),
  /** Turns running on this bridge and its capacity (WORLDLINE_MAX_TURNS); past it prompts get 429. */
  turns: z.object({ running: z.number().int(), capacity: z.number().int() }),
  /** The database as this bridge's writes last saw it: null when fine, else `store:unavailable`, `disk:full` or `store:locked`. */
  store: z.object({ fault: z.string().nullable() }),
});
