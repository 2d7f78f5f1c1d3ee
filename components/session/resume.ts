/**
 * What the Resume button of an interrupted turn sends as a new turn. The interrupted
 * turn's prompt (and any images) are already in the model's history — the user message
 * is recorded before the first step, and an approval can only be pending after it — so
 * re-sending the prompt would repeat it; a "continue" tells the model what happened. (A turn
 * that was waiting on a person is not interrupted: it waits on, server/agent/run-state.ts.)
 */
export const RESUME_PROMPT =
  "The bridge restarted while the previous turn was running, so it was interrupted (a tool call or answer in progress did not finish). Continue the task where you left off.";
