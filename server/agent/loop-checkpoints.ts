import { errorMessage } from "../errors";
import type { CheckpointReason } from "./checkpoint-port";
import type { HistoryRecord } from "./context";
import { dmailMessage, type DMail } from "./dmail";
import type { TurnRun } from "./turn-run";

/** The loop's checkpoints (server/agent/loop.ts): one per step, and the D-Mail jump back to one. */

/** What checkpoints read of the turn. */
type CheckpointRun = Pick<TurnRun, "sessionId" | "workspace" | "turnNumber" | "context" | "emit" | "checkpoints">;

/** D-Mail: back to the checkpoint, then on with the message (Kimi CLI's BackToTheFuture). */
export async function travelBack(run: CheckpointRun, mail: DMail, step: number): Promise<void> {
  const { context, emit } = run;
  const position = context.checkpointPosition(mail.checkpoint);
  if (position === undefined) return; // validated when sent; the context only grew since
  const marker = context.all()[position] as Extract<HistoryRecord, { kind: "checkpoint" }>;
  await context.truncate(position);
  // Restoring files is the checkpoint service's business; a failure there must not lose the D-Mail.
  const revert = run.checkpoints?.revertTo?.({ sessionId: run.sessionId, checkpointId: marker.checkpointId });
  const filesRestored = revert ? await revert.catch(() => false) : false; // the message tells the model the files were not restored
  emit.event({
    type: "notice",
    payload: {
      level: "info",
      text: `D-Mail sent back to checkpoint ${mail.checkpoint}: ${mail.message}`,
      turnId: emit.turnId,
    },
  });
  await checkpoint(run, step, "dmail");
  await context.append({
    kind: "message",
    message: { role: "user", content: dmailMessage(mail.message, filesRestored) },
  });
}

/** A checkpoint row (through the port) plus its marker in the history and an event. */
export async function checkpoint(run: CheckpointRun, step: number, reason: CheckpointReason): Promise<void> {
  const { checkpoints, context, emit } = run;
  if (!checkpoints) return;
  const turn = run.turnNumber ?? 0;
  let created;
  try {
    created = await checkpoints.create({
      sessionId: run.sessionId,
      turn,
      step,
      reason,
      historyPosition: context.length,
      workspace: run.workspace,
    });
  } catch (error) {
    // A failed snapshot must not stop the work; the user sees why there's no checkpoint.
    emit.event({
      type: "notice",
      payload: { level: "warning", text: `No checkpoint for this step: ${errorMessage(error)}`, turnId: emit.turnId },
    });
    return;
  }
  // Staged: written with the user's message while the step's model request is on its way.
  context.stage({ kind: "checkpoint", checkpointId: created.id, number: created.number });
  emit.event({
    type: "checkpoint.created",
    payload: { checkpointId: created.id, number: created.number, turn, step, reason },
  });
}
