import type { TurnRun } from "./turn-run";

/**
 * Writes staged before a step's model request wait at most this long for the stream's first
 * event; a crash before they land loses only what the event log also lost.
 */
const STAGED_WRITE_DELAY_MS = 25;

/**
 * What the loop staged for the history since the last step (checkpoint markers, the user's
 * message) and the runtime's status row are written, and the step's snapshot is started, after
 * the step's model request, not before it: once the stream's first event has gone out to the
 * clients (setImmediate runs after the socket writes queued in microtasks), or after
 * STAGED_WRITE_DELAY_MS if the model is slow to answer. Each write costs ~0.5–1 ms of the event
 * loop, which otherwise sat between the prompt and the first token; the step's own `save` waits
 * for them before it ends.
 */
export function afterRequest(
  run: Pick<TurnRun, "context" | "onRequestSent" | "checkpoints" | "sessionId">,
  step: number,
): { streamed(): void; cancel(): void } {
  let done = false;
  let immediate: NodeJS.Immediate | undefined;
  const write = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    run.context.flush();
    run.onRequestSent?.();
  };
  const timer = setTimeout(write, STAGED_WRITE_DELAY_MS);
  // After the first step, the step's snapshot starts once the request is written (the check phase
  // after this turn of the event loop), not when a tool needs it: it overlaps the model's answer
  // (measured: ~3 ms less per step). The first step's answer is the turn's first token, which
  // the snapshot would delay by as much; there it waits for a tool or its delay.
  const capture = setImmediate(() => void (step > 1 && run.checkpoints?.captured?.(run.sessionId)));
  return {
    streamed: () => void (immediate ??= setImmediate(write)),
    // The step is over: its own save writes what is staged.
    cancel: () => {
      done = true;
      clearTimeout(timer);
      clearImmediate(capture);
      if (immediate) clearImmediate(immediate);
    },
  };
}
