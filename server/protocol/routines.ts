import * as z from "zod";

/** Routines: saved prompts run on a schedule or fired over HTTP with their own token. */
const RoutineFields = {
  name: z.string().trim().min(1).max(200),
  prompt: z.string().min(1).max(200_000),
  workspace: z.string().min(1).max(4096).describe("Absolute path of the folder each run works in"),
  runner: z.string().min(1).max(64).nullable().optional(),
  isolation: z.enum(["worktree", "none"]).optional(),
  model: z.string().max(200).nullable().optional(),
  mode: z.enum(["default", "plan"]).optional(),
  schedule: z.string().max(200).nullable().optional().describe("Cron: five fields, or six with seconds"),
  budget_usd: z.number().finite().min(0).max(1_000_000).nullable().optional(),
};

export const CreateRoutineBody = z.object(RoutineFields).strict();
export type CreateRoutineBody = z.infer<typeof CreateRoutineBody>;

export const UpdateRoutineBody = z.object(RoutineFields).partial().strict();
export type UpdateRoutineBody = z.infer<typeof UpdateRoutineBody>;

export const RoutineView = z.object({
  id: z.string(),
  name: z.string(),
  prompt: z.string(),
  workspace: z.string(),
  runner: z.string().nullable(),
  isolation: z.enum(["worktree", "none"]),
  model: z.string().nullable(),
  mode: z.enum(["default", "plan"]),
  schedule: z.string().nullable(),
  budget_usd: z.number().nullable(),
  created_at: z.string(),
});
export type RoutineView = z.infer<typeof RoutineView>;

export const CreatedRoutine = RoutineView.extend({ token: z.string() });
export type CreatedRoutine = z.infer<typeof CreatedRoutine>;

export const RoutineRunView = z.object({
  id: z.string(),
  session_id: z.string().nullable(),
  trigger: z.enum(["schedule", "fire"]),
  status: z.string(),
  /** How the run ended (its last turn's status, or `failed`); null while it runs or waits. */
  outcome: z.string().nullable(),
  error: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  cost_usd: z.number().nullable(),
});
export type RoutineRunView = z.infer<typeof RoutineRunView>;

export const FiredRoutine = z.object({
  run_id: z.string(),
  session_id: z.string().optional(),
  queued: z.literal(true).optional(),
});
