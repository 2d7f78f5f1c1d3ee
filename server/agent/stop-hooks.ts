import type { TurnRun } from "./turn-run";

/**
 * How many times Stop hooks may send one turn back to work. Claude Code allows 8 blocks in a row;
 * a few are enough to act on a check's reason (tests still fail, a file is missing), and each
 * continuation is model steps a person pays for.
 */
const MAX_STOP_CONTINUATIONS = 3;

/** What the model reads when a Stop hook blocked its answer: the hook's reason, as Claude Code frames it. */
function stopFeedback(reason: string): string {
  return `Stop hook feedback:\n${reason}`;
}

/**
 * Runs the turn's Stop hooks on an answer with no tool calls. A hook that blocks (exit 2 or
 * `"decision": "block"`) sends the turn on with its reason, for the model only (the hook's
 * transcript line shows it), as a person's message would; the hooks run again at the next answer
 * with `stop_hook_active: true`. Past MAX_STOP_CONTINUATIONS the answer stands, and a notice says why.
 * True when the turn goes on.
 */
export async function stopHooksContinue(
  run: Pick<TurnRun, "hooks" | "context" | "emit">,
  continuations: number,
): Promise<boolean> {
  if (!run.hooks) return false;
  const verdict = await run.hooks.run("Stop", { reason: "completed", stop_hook_active: continuations > 0 });
  if (verdict.block === undefined) return false;
  const { emit } = run;
  if (continuations >= MAX_STOP_CONTINUATIONS) {
    const text =
      `A Stop hook blocked the end of this turn again; after ${MAX_STOP_CONTINUATIONS} continuations ` +
      "the turn ends here. Its reason is in the hook's line above.";
    emit.event({ type: "notice", payload: { level: "warning", text, turnId: emit.turnId } });
    return false;
  }
  run.context.stage({ kind: "message", message: { role: "user", content: stopFeedback(verdict.block) } });
  return true;
}
