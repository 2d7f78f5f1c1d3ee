import * as z from "zod";

/**
 * The Changes view (review): everything a session changed since a base checkpoint, file by file
 * and hunk by hunk, with per-hunk and per-file accept and revert (server/checkpoints/review.ts).
 */

/** `start` (the session's first snapshot) or a checkpoint id or number. */
export const ReviewBase = z.union([z.literal("start"), z.string().min(1).max(64), z.number().int().min(0)]);
export type ReviewBase = z.infer<typeof ReviewBase>;

export const ReviewHunk = z.object({
  /** Stable while the hunk's text is unchanged (a hash of its lines). */
  id: z.string(),
  /** 1-based first line in the base version (for a pure insertion: the line it follows, 0 at the top). */
  old_start: z.number().int(),
  old_lines: z.number().int(),
  new_start: z.number().int(),
  new_lines: z.number().int(),
  old_text: z.string(),
  new_text: z.string(),
  accepted: z.boolean(),
});
export type ReviewHunk = z.infer<typeof ReviewHunk>;

export const ReviewFile = z.object({
  path: z.string(),
  old_path: z.string().optional(),
  status: z.enum(["added", "modified", "deleted", "renamed"]),
  additions: z.number().int(),
  deletions: z.number().int(),
  binary: z.boolean(),
  /** Too large or binary: no contents or hunks, only file-level accept and revert. */
  too_large: z.boolean(),
  /** The base version and the version now (null: the file does not exist on that side, or is binary/too large). */
  old_content: z.string().nullable(),
  new_content: z.string().nullable(),
  hunks: z.array(ReviewHunk),
  /** Accepted as a whole (while its content stays as accepted), or every hunk accepted. */
  accepted: z.boolean(),
});
export type ReviewFile = z.infer<typeof ReviewFile>;

export const ReviewChanges = z.object({
  /** The base checkpoint resolved (id and number). */
  base: z.object({ id: z.string(), number: z.number().int(), turn: z.number().int(), reason: z.string() }),
  files: z.array(ReviewFile),
  /** Files not accepted yet. */
  pending: z.number().int(),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
});
export type ReviewChanges = z.infer<typeof ReviewChanges>;

export const ReviewQuery = z.object({ base: z.string().max(64).default("start") });

export const ReviewActionBody = z
  .object({
    base: ReviewBase.default("start"),
    /** The file; omitted for accept: every file of the base. */
    path: z.string().min(1).max(4096).optional(),
    /** One hunk of the file (its id from GET …/changes); omitted: the whole file. */
    hunk: z.string().min(1).max(64).optional(),
  })
  .strict();
export type ReviewActionBody = z.input<typeof ReviewActionBody>;

export const ReviewRevertResult = z.object({
  path: z.string(),
  hunk: z.string().nullable(),
  /** Paths written or deleted by the revert. */
  written: z.array(z.string()),
  deleted: z.array(z.string()),
  /** The checkpoint taken just before: POST …/rewind/undo (or rewind to it) undoes the revert. */
  undo_checkpoint: z.string(),
});
export type ReviewRevertResult = z.infer<typeof ReviewRevertResult>;
