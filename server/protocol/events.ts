import * as z from "zod";
import { UserImageRef } from "./images";
import { ChangeStat } from "./fleet";

/**
 * Every state change a session shows is one of these events, appended to the
 * session's seq-numbered log and fanned out to every tab. Names are dotted and
 * lower-case; the public SSE API maps them to its snake_case names in
 * server/transport/http/sse-map.ts.
 */

export const ToolState = z.enum(["pending", "waiting_approval", "running", "completed", "error"]);
export type ToolState = z.infer<typeof ToolState>;

export const TurnStage = z.enum([
  "planning",
  "running_tool",
  "waiting_for_approval",
  "waiting_for_password",
  "answering",
  "done",
]);
export type TurnStage = z.infer<typeof TurnStage>;

export const TurnOutcome = z.enum([
  "completed",
  "cancelled",
  "error",
  "interrupted",
  "max_steps",
  "rejected",
  "loop_detected",
]);
export type TurnOutcome = z.infer<typeof TurnOutcome>;

/** How a turn's last model step ended (the public `done` event's `stop_reason`, in the OpenAPI document). */
export const StopReason = z.enum(["completed", "truncated", "refused", "content_filter", "error", "budget"]);
export type StopReason = z.infer<typeof StopReason>;

export const GenerationStats = z.object({
  output_tokens: z.number(),
  seconds: z.number(),
  min_tokens_per_second: z.number(),
  avg_tokens_per_second: z.number(),
  max_tokens_per_second: z.number(),
  /** Prompt tokens over the turn's model calls; null when the provider reported no usage. */
  input_tokens: z.number().nullable().optional(),
  /** The part of `input_tokens` the provider served from its prompt cache; null when it does not say. */
  cached_input_tokens: z.number().nullable().optional(),
  /** The part of `output_tokens` spent on reasoning, where the provider or external agent says; null when unknown. */
  reasoning_tokens: z.number().nullable().optional(),
  /**
   * The part of `input_tokens` written to the provider's prompt cache (`cache_creation_input_tokens`, which
   * gateways pass through from Anthropic); priced as input. Null when the provider does not say.
   */
  cache_write_tokens: z.number().nullable().optional(),
  /** At the model's price (Settings); null when the model has no known price. */
  cost_usd: z.number().nullable().optional(),
});
export type GenerationStats = z.infer<typeof GenerationStats>;

const turnRef = { turnId: z.string() };

export const eventPayloads = {
  "session.updated": z.object({
    title: z.string().optional(),
    yolo: z.boolean().optional(),
    model: z.string().nullable().optional(),
    status: z.enum(["idle", "running", "interrupted"]).optional(),
    /** Plan mode: the agent only reads, searches and proposes a plan (server/agent/plan-mode.ts). */
    mode: z.enum(["default", "plan"]).optional(),
    archived: z.boolean().optional(),
    /** A worktree session's diff stat against its base, when it changed (server/worktrees). */
    changes: ChangeStat.optional(),
    /** The session's spend limit in USD, when it was set, removed (null) or raised by an allow (server/budgets). */
    budget_usd: z.number().nullable().optional(),
    /** A worktree's project setup: running, then ok or failed. */
    setup: z.enum(["running", "ok", "failed"]).optional(),
  }),
  "turn.started": z.object({ ...turnRef, number: z.number().int(), prompt: z.string() }),
  "turn.stage": z.object({ ...turnRef, stage: TurnStage }),
  "turn.retry": z.object({ ...turnRef, attempt: z.number().int(), delayMs: z.number(), message: z.string() }),
  "turn.error": z.object({ ...turnRef, code: z.string(), message: z.string() }),
  /** A prompt sent while another turn runs: it waits and starts when that turn ends. */
  "turn.queued": z.object({ ...turnRef, prompt: z.string(), position: z.number().int() }),
  "compaction.started": z.object({ ...turnRef, reason: z.enum(["auto", "manual"]), tokens: z.number() }),
  "compaction.completed": z.object({
    ...turnRef,
    outcome: z.enum(["completed", "skipped", "cancelled", "error"]),
    tokensBefore: z.number(),
    tokensAfter: z.number(),
    summarized: z.number().int(),
    kept: z.number().int(),
    message: z.string().optional(),
  }),

  "turn.completed": z.object({
    ...turnRef,
    outcome: TurnOutcome,
    stats: GenerationStats.optional(),
    message: z.string().optional(),
    /** Absent for turns no model step ended (cancelled before an answer, older turns). */
    stopReason: StopReason.optional(),
  }),
  /** `images`: what the log keeps of attached images (type, size, a small preview); the full images are in the history. */
  "message.user": z.object({
    ...turnRef,
    messageId: z.string(),
    text: z.string(),
    images: z.array(UserImageRef).max(16).optional(),
  }),
  "message.part.delta": z.object({
    ...turnRef,
    messageId: z.string(),
    part: z.enum(["text", "reasoning"]),
    delta: z.string(),
  }),
  "message.completed": z.object({ ...turnRef, messageId: z.string() }),
  "tool.call": z.object({
    ...turnRef,
    messageId: z.string(),
    toolCallId: z.string(),
    name: z.string(),
    args: z.unknown(),
    parentToolCallId: z.string().optional(),
  }),
  "tool.progress": z.object({ ...turnRef, toolCallId: z.string(), text: z.string() }),
  "tool.state": z.object({
    ...turnRef,
    toolCallId: z.string(),
    state: ToolState,
    output: z.string().optional(),
    isError: z.boolean().optional(),
    display: z.record(z.string(), z.unknown()).optional(),
    /** A name or input given after `tool.call` (an external ACP agent's tool_call_update) replaces the first. */
    name: z.string().optional(),
    args: z.unknown().optional(),
  }),
  "approval.requested": z.object({
    ...turnRef,
    approvalId: z.string(),
    toolCallId: z.string(),
    tool: z.string(),
    args: z.unknown(),
    description: z.string(),
    riskLevel: z.enum(["none", "low", "medium", "high"]),
    diff: z.string().optional(),
    kind: z.enum(["tool", "password"]).default("tool"),
    /** The pattern "allow for this session" records (e.g. `git status*`). */
    scope: z.string().optional(),
  }),
  "approval.decided": z.object({
    approvalId: z.string(),
    toolCallId: z.string().optional(),
    turnId: z.string().optional(),
    status: z.enum(["approved", "rejected", "interrupted", "cancelled"]),
    decision: z.string().optional(),
    feedback: z.string().optional(),
    decidedBy: z.string().optional(),
  }),
  "context.usage": z.object({
    tokens: z.number(),
    window: z.number(),
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    /** Of `inputTokens`, what the provider's prompt cache served (absent: not reported). */
    cachedInputTokens: z.number().optional(),
  }),
  "checkpoint.created": z.object({
    checkpointId: z.string(),
    number: z.number().int(),
    turn: z.number().int(),
    step: z.number().int(),
    reason: z.string(),
  }),
  "checkpoint.rewound": z.object({
    checkpointId: z.string(),
    number: z.number().int(),
    /** The checkpoint taken just before the rewind (its undo point). */
    undoCheckpointId: z.string(),
    undoNumber: z.number().int(),
    conversation: z.boolean(),
    files: z.boolean(),
    written: z.number().int(),
    deleted: z.number().int(),
    /** Set when this rewind undid an earlier one. */
    undo: z.boolean().optional(),
  }),
  /** A review action in the Changes view (accept or revert, of a file or one hunk), for every tab to refresh. */
  "review.updated": z.object({
    action: z.enum(["accept", "revert"]),
    base: z.string(),
    path: z.string().nullable(),
    hunk: z.string().nullable(),
    undoCheckpointId: z.string().optional(),
  }),
  "todo.updated": z.object({
    items: z.array(z.object({ title: z.string(), status: z.enum(["pending", "in_progress", "done"]) })),
  }),
  "terminal.opened": z.object({ terminalId: z.string(), title: z.string() }),
  "terminal.renamed": z.object({ terminalId: z.string(), title: z.string() }),
  "terminal.closed": z.object({ terminalId: z.string(), exitCode: z.number().nullable().optional() }),
  notice: z.object({ level: z.enum(["info", "warning", "error"]), text: z.string(), turnId: z.string().optional() }),
  /** A lifecycle hook ran (server/hooks): one line in the transcript, and a row in the audit. */
  "hook.ran": z.object({
    turnId: z.string().optional(),
    /** The tool call a PreToolUse/PostToolUse hook ran for. */
    toolCallId: z.string().optional(),
    event: z.string(),
    command: z.string(),
    /** The hooks file it came from. */
    file: z.string(),
    /** null when it was killed (its time limit) or could not start. */
    exitCode: z.number().int().nullable(),
    ms: z.number(),
    outcome: z.enum(["ok", "blocked", "approved", "timed_out", "failed"]),
    /** What it said: the block's reason, or its stderr when it failed. */
    reason: z.string().optional(),
  }),
  /** The post-turn memory decision (server/memory): made only when the turn said something worth keeping. */
  "memory.policy_decision": z.object({
    turnId: z.string().optional(),
    decision: z.enum(["store", "skip"]),
    via: z.enum(["rules", "model"]),
    reason: z.string(),
    text: z.string().optional(),
  }),
  "memory.stored": z.object({
    turnId: z.string().optional(),
    memoryId: z.string(),
    text: z.string(),
    type: z.enum(["fact", "preference", "note", "lesson"]),
    scope: z.enum(["global", "workspace", "session"]),
    importance: z.number().int(),
    source: z.enum(["user", "agent", "policy", "reflection"]),
  }),
  /** Post-task reflection (a setting, off by default): a critic call that may store a lesson. */
  "reflection.completed": z.object({
    turnId: z.string(),
    outcome: z.enum(["stored", "skipped", "error"]),
    lesson: z.string().optional(),
    memoryId: z.string().optional(),
    message: z.string().optional(),
  }),
} as const;

export type EventType = keyof typeof eventPayloads;
export type EventPayload<T extends EventType> = z.infer<(typeof eventPayloads)[T]>;
export const EventType = z.enum(Object.keys(eventPayloads) as [EventType, ...EventType[]]);

/** A typed event before it has a place in the log. */
export type SessionEvent = { [T in EventType]: { type: T; payload: EventPayload<T> } }[EventType];

/** An event as stored and sent: its place in the session's log and when it was appended. */
export const EventEnvelope = z.object({
  seq: z.number().int().positive(),
  type: EventType,
  payload: z.unknown(),
  createdAt: z.string(),
});
export type EventEnvelope = { seq: number; createdAt: string } & SessionEvent;

/** Parses an untrusted {type, payload} pair; throws a ZodError on anything unknown. */
export function parseSessionEvent(raw: { type: string; payload: unknown }): SessionEvent {
  const type = EventType.parse(raw.type);
  const payload = eventPayloads[type].parse(raw.payload);
  return { type, payload } as SessionEvent;
}
