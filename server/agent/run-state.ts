import * as z from "zod";
import { errorMessage } from "../errors";
import type { ToolResult } from "../tools/types";
import type { ChatMessage } from "./provider";

/**
 * The loop's state while a turn waits on a person (an approval, a sudo password, a budget), kept
 * on the turn's row so the turn outlives its bridge: after a restart or a takeover, a live bridge
 * adopts the turn (server/leases/sweep.ts), waits on the same requests and, once they are decided,
 * finishes the step from here and goes on looping (server/agent/resume-step.ts). The history up
 * to the step is already stored; what the step has not yet recorded is here: its assistant
 * message, the results of its calls that finished, and what waits on whom.
 */

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const assistantMessageSchema = z.object({
  role: z.literal("assistant"),
  content: z.string().nullable(),
  reasoning_content: z.string().optional(),
  reasoning_form: z.enum(["reasoning", "content_parts", "think_tags"]).optional(),
  tool_calls: z.array(toolCallSchema).optional(),
});

const resultSchema = z.object({
  output: z.string(),
  isError: z.boolean(),
  display: z.record(z.string(), z.unknown()).optional(),
});

/** What allowing a budget request raises (server/budgets). */
export const budgetRaiseSchema = z.object({
  scope: z.enum(["session", "session_tokens", "person", "deployment"]),
  step: z.number(),
  personId: z.string().optional(),
});
export type BudgetRaise = z.infer<typeof budgetRaiseSchema>;

const waitSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("tool"), approvalId: z.string(), callId: z.string(), scope: z.string().nullable() }),
  z.object({ kind: z.literal("password"), approvalId: z.string(), callId: z.string() }),
  z.object({ kind: z.literal("budget"), approvalId: z.string(), raise: budgetRaiseSchema }),
]);
export type Wait = z.infer<typeof waitSchema>;

export const runStateSchema = z.object({
  version: z.literal(1),
  /** The step that waits: a budget wait is before its model call, the others after it. */
  step: z.number().int().positive(),
  /** The step's answer with its tool calls; absent while it has not finished streaming (a budget wait). */
  message: assistantMessageSchema.optional(),
  /** Results of the step's calls that finished, by call id. */
  results: z.record(z.string(), resultSchema),
  waits: z.array(waitSchema).min(1),
});
export type RunState = z.infer<typeof runStateSchema>;
type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;

/** The stored run state, or null when it does not parse (a row written by another version). */
export function parseRunState(json: string): RunState | null {
  try {
    const parsed = runStateSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * Whether a turn found without its owner can be taken over: it waits on requests still pending,
 * and on nothing the run state does not know of (a request asked after the state was last written).
 */
export function canResume(state: RunState | null, pending: readonly string[]): state is RunState {
  if (!state || pending.length === 0) return false;
  const waited = new Set(state.waits.map((wait) => wait.approvalId));
  return pending.every((id) => waited.has(id));
}

/**
 * Keeps the run state of one turn as it waits: written when a request is asked once the step's
 * answer is known (and again as its other calls finish), so the stored state always names every
 * request the turn waits on. A turn that never waits writes nothing. A failed write is logged:
 * the turn goes on, and a restart during that wait interrupts it as before.
 */
export class RunStateRecorder {
  private step = 0;
  private message?: AssistantMessage;
  private readonly results = new Map<string, z.infer<typeof resultSchema>>();
  private waits: Wait[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly save: (json: string) => Promise<void>) {}

  /** A new step starts (before its budget check): the last one's waits and results are over. */
  stepStarted(step: number): void {
    this.step = step;
    this.message = undefined;
    this.results.clear();
    this.waits = [];
  }

  /** The step's answer is complete; its calls may still run or wait. */
  streamed(message: AssistantMessage): Promise<void> {
    this.message = message;
    return this.write();
  }

  /** A request was asked; resolves once the state naming it is stored (when it can be). */
  asked(wait: Wait): Promise<void> {
    this.waits.push(wait);
    return this.write();
  }

  answered(approvalId: string): void {
    this.waits = this.waits.filter((wait) => wait.approvalId !== approvalId);
  }

  finished(callId: string, result: ToolResult): void {
    this.results.set(callId, { output: result.output, isError: result.isError, display: result.display });
    void this.write();
  }

  private write(): Promise<void> {
    const state = this.state();
    if (!state) return this.writing;
    const json = JSON.stringify(state);
    this.writing = this.writing
      .then(() => this.save(json))
      .catch((error: unknown) => {
        console.error(
          `[worldline] the turn's run state was not stored (${errorMessage(error)}); a restart now interrupts it`,
        );
      });
    return this.writing;
  }

  private state(): RunState | null {
    if (this.waits.length === 0 || this.step === 0) return null;
    // A call's wait is resumable only with the answer that made the call.
    if (!this.message && this.waits.some((wait) => wait.kind !== "budget")) return null;
    return {
      version: 1,
      step: this.step,
      ...(this.message ? { message: this.message } : {}),
      results: Object.fromEntries(this.results),
      waits: this.waits,
    };
  }
}
