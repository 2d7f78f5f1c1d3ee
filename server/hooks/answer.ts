import * as z from "zod";
import type { HookEvent } from "../agent";
import type { HookRunResult } from "./run";

/** Exit code with which a hook blocks (Claude Code's): its stderr is the reason the model reads. */
const BLOCKING_EXIT = 2;

/**
 * JSON a hook may print on stdout (Claude Code's shapes): `decision`/`reason`, and the newer
 * `hookSpecificOutput` with `permissionDecision` and `additionalContext`.
 */
const HookJson = z.object({
  decision: z.enum(["block", "approve"]).optional(),
  reason: z.string().optional(),
  additionalContext: z.string().optional(),
  hookSpecificOutput: z
    .object({
      permissionDecision: z.enum(["allow", "deny", "ask"]).optional(),
      permissionDecisionReason: z.string().optional(),
      additionalContext: z.string().optional(),
    })
    .optional(),
});

/** What one hook's run means for the loop, and how its transcript line reads. */
export interface HookAnswer {
  outcome: "ok" | "blocked" | "approved" | "timed_out" | "failed";
  reason?: string;
  /** Set when it blocked: the reason for the model. */
  block?: string;
  approve?: boolean;
  context: string[];
  feedback: string[];
}

/** Events whose plain stdout (exit 0, not JSON) is context for the model, as in Claude Code. */
const CONTEXT_EVENTS: readonly HookEvent[] = ["UserPromptSubmit", "SessionStart"];

export function interpret(event: HookEvent, result: HookRunResult): HookAnswer {
  const answer: HookAnswer = { outcome: "ok", context: [], feedback: [] };
  if (result.startError) return { ...answer, outcome: "failed", reason: `could not start: ${result.startError}` };
  if (result.timedOut) return { ...answer, outcome: "timed_out", reason: "killed at its time limit" };
  if (result.exitCode === BLOCKING_EXIT) {
    const reason = result.stderr.trim() || "a hook blocked it (exit code 2, no reason given)";
    return blocked(event, answer, reason);
  }
  if (result.exitCode !== 0) {
    return { ...answer, outcome: "failed", reason: result.stderr.trim() || `exit code ${result.exitCode}` };
  }
  const json = parseJson(result.stdout);
  if (!json) {
    const text = result.stdout.trim();
    if (text && CONTEXT_EVENTS.includes(event)) answer.context.push(text);
    return answer;
  }
  const specific = json.hookSpecificOutput;
  const context = specific?.additionalContext ?? json.additionalContext;
  if (context && CONTEXT_EVENTS.includes(event)) answer.context.push(context);
  const reason = specific?.permissionDecisionReason ?? json.reason;
  if (json.decision === "block" || specific?.permissionDecision === "deny") {
    return blocked(event, answer, reason?.trim() || "a hook blocked it (no reason given)");
  }
  if (event === "PreToolUse" && (json.decision === "approve" || specific?.permissionDecision === "allow")) {
    return { ...answer, outcome: "approved", approve: true, ...(reason ? { reason } : {}) };
  }
  return answer;
}

/** A PostToolUse block is feedback on a call that already ran; elsewhere it stops what the event announced. */
function blocked(event: HookEvent, answer: HookAnswer, reason: string): HookAnswer {
  if (event === "PostToolUse") return { ...answer, outcome: "blocked", reason, feedback: [reason] };
  return { ...answer, outcome: "blocked", reason, block: reason };
}

function parseJson(stdout: string): z.infer<typeof HookJson> | undefined {
  const text = stdout.trim();
  if (!text.startsWith("{")) return undefined;
  try {
    const parsed = HookJson.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // not JSON after all: plain output
  }
}
