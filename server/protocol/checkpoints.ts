import * as z from "zod";

/** Checkpoints on the wire: the timeline list, diff preview, rewind, undo and fork (the public API: server/transport/http/openapi-docs.ts). */

export const CheckpointFile = z.object({
  path: z.string(),
  status: z.enum(["added", "modified", "deleted", "renamed"]),
  additions: z.number().int(),
  deletions: z.number().int(),
  old_path: z.string().optional(),
  binary: z.boolean().optional(),
  /** Changed outside the agent (the user's editor or terminal) between its last snapshot and this checkpoint. */
  outside: z.boolean().optional(),
});
export type CheckpointFile = z.infer<typeof CheckpointFile>;

/** Why a checkpoint exists: turn start, step start, end of a turn, a rewind (its undo point), a fork's start, … */
export const CheckpointReason = z.enum(["turn", "step", "turn_end", "rewind", "fork", "compaction", "dmail"]);
export type CheckpointReason = z.infer<typeof CheckpointReason>;

export const CheckpointView = z.object({
  id: z.string(),
  number: z.number().int(),
  turn: z.number().int(),
  step: z.number().int(),
  reason: z.string(),
  created_at: z.string(),
  history_position: z.number().int(),
  /** False when the workspace could not be snapshotted (see note): only the conversation can be rewound. */
  has_snapshot: z.boolean(),
  note: z.string().nullable(),
  /** Files changed since the previous checkpoint of the session. */
  files: z.array(CheckpointFile),
});
export type CheckpointView = z.infer<typeof CheckpointView>;

export const CheckpointDiff = z.object({
  checkpoint: z.string(),
  files: z.array(CheckpointFile),
  patch: z.string(),
  truncated: z.boolean(),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
});
export type CheckpointDiff = z.infer<typeof CheckpointDiff>;

const checkpointRef = z
  .union([z.string().min(1).max(64), z.number().int().min(0)])
  .describe("A checkpoint id, or its number in the session");

export const RewindBody = z
  .object({
    checkpoint: checkpointRef,
    conversation: z.boolean().default(true),
    files: z.boolean().default(true),
    force: z.boolean().default(false),
  })
  .strict();
export type RewindBody = z.input<typeof RewindBody>;

export const UndoBody = z.object({ force: z.boolean().default(false) }).strict();

export const RewindResult = z.object({
  /** The checkpoint rewound to. */
  checkpoint: z.string(),
  /** The checkpoint taken just before rewinding: rewind to it (or POST …/rewind/undo) to undo. */
  undo_checkpoint: z.string(),
  conversation: z.boolean(),
  files: z.boolean(),
  written: z.array(z.string()),
  deleted: z.array(z.string()),
  /** Paths left alone because their content was not captured (size limits). */
  untouched: z.array(z.string()),
});
export type RewindResult = z.infer<typeof RewindResult>;

export const ForkBody = z
  .object({
    checkpoint: checkpointRef,
    worktree: z.boolean().default(false).describe("Use a new git worktree when the workspace is a git repository"),
    title: z.string().min(1).max(200).optional(),
  })
  .strict();
export type ForkBody = z.input<typeof ForkBody>;

export const ForkResult = z.object({ id: z.string(), workspace: z.string(), worktree: z.boolean() });
export type ForkResult = z.infer<typeof ForkResult>;

export const CheckpointSettings = z
  .object({
    /** A D-Mail from the agent also restores the workspace files of that checkpoint. */
    dmail_restores_files: z.boolean(),
  })
  .strict();
export type CheckpointSettings = z.infer<typeof CheckpointSettings>;
