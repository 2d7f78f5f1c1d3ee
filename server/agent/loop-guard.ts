import type { ToolCallMessagePart } from "./provider";
import { callSignature } from "./tool-runner";

/** Identical steps in a row before the model is told it is looping: two repeats can be a legitimate re-check. */
export const LOOP_WARN_AFTER = 3;
/** One more identical step after the warning stops the turn. */
export const LOOP_STOP_AFTER = 4;

/** Steps in a row whose every call a hook blocked before the turn stops: the model rarely gets past a third. */
export const HOOK_BLOCK_STOP_AFTER = 3;

export type LoopVerdict = "ok" | "warn" | "stop";

export const LOOP_WARNING =
  "[loop guard] You have made exactly the same tool call(s) with the same arguments several steps in a row, and the result does not change. " +
  "Do not repeat it again: change approach, or answer with what you have. Repeating it once more stops the turn.";

/**
 * Notices the same tool call(s) with the same arguments repeated step after
 * step. Anything different in between (an edit before re-running the tests)
 * resets the count, so fix-and-retry work is not mistaken for a loop.
 */
export class LoopGuard {
  private last = "";
  private streak = 0;
  private blockedSteps = 0;

  /**
   * Whether to stop after a step in which hooks blocked every call: different calls each time
   * escape `observe`, and a hook that blocks everything would otherwise run to max steps.
   */
  allBlocked(everyCallBlocked: boolean): boolean {
    this.blockedSteps = everyCallBlocked ? this.blockedSteps + 1 : 0;
    return this.blockedSteps >= HOOK_BLOCK_STOP_AFTER;
  }

  observe(calls: readonly ToolCallMessagePart[]): LoopVerdict {
    if (calls.length === 0) {
      this.last = "";
      this.streak = 0;
      return "ok";
    }
    const fingerprint = calls.map(callSignature).sort().join("\n");
    this.streak = fingerprint === this.last ? this.streak + 1 : 1;
    this.last = fingerprint;
    if (this.streak >= LOOP_STOP_AFTER) return "stop";
    if (this.streak >= LOOP_WARN_AFTER) return "warn";
    return "ok";
  }
}
