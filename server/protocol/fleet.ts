import * as z from "zod";

/**
 * The fleet's shapes: a session's worktree, its board state and diff stat, and
 * the board's live feed. `GET /sessions` and `GET /sessions/:id` carry these fields; a tab that
 * sent `board.subscribe` gets a `board.card` for every session whose card changed.
 */
export const SessionState = z.enum(["running", "needs_you", "review", "failed", "idle", "archived"]);
export type SessionState = z.infer<typeof SessionState>;

export const SessionIsolation = z.enum(["worktree", "none"]);
export type SessionIsolation = z.infer<typeof SessionIsolation>;

export const WorktreeInfo = z.object({
  path: z.string(),
  branch: z.string(),
  base: z.string(),
  /** The user's repository (its top level) the worktree was made from. */
  repo: z.string(),
});
export type WorktreeInfo = z.infer<typeof WorktreeInfo>;

/** Against `base`, committed or not. */
export const ChangeStat = z.object({
  files: z.number().int().min(0),
  additions: z.number().int().min(0),
  deletions: z.number().int().min(0),
});
export type ChangeStat = z.infer<typeof ChangeStat>;

/** What a card shows of the one request that waits, so it can be decided there. */
export const CardApproval = z.object({
  approval_id: z.string(),
  tool: z.string(),
  description: z.string(),
  risk_level: z.string(),
});
export type CardApproval = z.infer<typeof CardApproval>;

export const BoardCard = z.object({
  id: z.string(),
  title: z.string(),
  workspace: z.string(),
  runner: z.string().nullable(),
  /** What the board groups by: the worktree's repo, else the workspace. */
  group: z.string(),
  state: SessionState,
  worktree: WorktreeInfo.nullable(),
  changes: ChangeStat.nullable(),
  cost_usd: z.number().nullable(),
  /** The session's spend limit in USD (server/budgets); null or absent = none. */
  budget_usd: z.number().nullable().optional(),
  /** When the running turn started (elapsed time on the card); null when none runs. */
  turn_started_at: z.string().nullable(),
  updated_at: z.string(),
  /** The last thing the agent did, one line ("ran npm test", "edited src/a.ts"). */
  last_activity: z.string().nullable(),
  approval: CardApproval.nullable(),
});
export type BoardCard = z.infer<typeof BoardCard>;

export const boardCommands = {
  "board.subscribe": z.object({ commandId: z.string().min(8).max(64).optional() }).strict(),
  "board.unsubscribe": z.object({ commandId: z.string().min(8).max(64).optional() }).strict(),
} as const;

export const boardMessages = {
  /** A card changed (or appeared); the whole card, so a tab never merges partial state. */
  "board.card": BoardCard,
  /** A session was deleted: its card goes. */
  "board.removed": z.object({ id: z.string() }),
} as const;

/** `POST /sessions/:id/commit`: no message = the model writes one from the diff. */
export const CommitBody = z.object({ message: z.string().min(1).max(20_000).optional() }).strict();
export type CommitBody = z.infer<typeof CommitBody>;
export const CommitResult = z.object({
  sha: z.string(),
  message: z.string(),
  /** Who wrote the message: the session's model, or a summary of the diff when no model is set. */
  message_by: z.enum(["user", "model", "summary"]),
});
export type CommitResult = z.infer<typeof CommitResult>;

export const MergeStrategy = z.enum(["squash", "merge"]);
export type MergeStrategy = z.infer<typeof MergeStrategy>;
export const MergeBody = z.object({ strategy: MergeStrategy.default("squash") }).strict();
export type MergeBody = z.infer<typeof MergeBody>;
export const MergeResult = z.object({ sha: z.string(), base: z.string() });
export type MergeResult = z.infer<typeof MergeResult>;

export const PushBody = z
  .object({
    remote: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^-\s][^\s]*$/, "a remote name or URL")
      .optional(),
  })
  .strict();
export type PushBody = z.infer<typeof PushBody>;
export const PushResult = z.object({ remote: z.string(), branch: z.string(), compare_url: z.string().nullable() });
export type PushResult = z.infer<typeof PushResult>;

export const ArchiveBody = z.object({ force: z.boolean().optional() }).strict();
export type ArchiveBody = z.infer<typeof ArchiveBody>;

/** `DELETE /sessions/:id?force=1` and archive's `force`. */
export const ForceQuery = z.object({ force: z.enum(["0", "1", "true", "false"]).optional() });

/** `details` of a 409 `worktree:unmerged`: exactly what removing the worktree would lose. */
export const UnmergedDetails = z.object({
  /** Commits on the branch neither merged into base nor pushed, newest first. */
  commits: z.array(z.object({ sha: z.string(), subject: z.string() })),
  /** Uncommitted paths (modified, added, deleted or untracked), as `git status` names them. */
  files: z.array(z.string()),
});
export type UnmergedDetails = z.infer<typeof UnmergedDetails>;
