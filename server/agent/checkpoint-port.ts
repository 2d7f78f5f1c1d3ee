import { randomUUID } from "node:crypto";
import type { EventLog } from "../sessions";
import * as store from "../store";

export type CheckpointReason = "turn" | "step" | "compaction" | "dmail";

export interface CheckpointInput {
  sessionId: string;
  /** The turn's number in the session (1-based). */
  turn: number;
  /** The step within the turn; 0 for the checkpoint at the start of the turn. */
  step: number;
  reason: CheckpointReason;
  /** Where the checkpoint's marker goes in the history (its position). */
  historyPosition: number;
  /** The session's workspace: what a snapshot captures. */
  workspace: string;
}

/**
 * Where the loop records checkpoints. server/checkpoints implements it with
 * workspace snapshots; without it the loop writes bare rows through the store.
 */
export interface CheckpointPort {
  create(input: CheckpointInput): Promise<{ id: string; number: number }>;
  /**
   * Called when a D-Mail sends the conversation back to a checkpoint, so the
   * workspace can follow. Resolves to true when files were restored.
   */
  revertTo?(input: { sessionId: string; checkpointId: string }): Promise<boolean>;
  /**
   * Resolves once every checkpoint created so far has its snapshot (its row may still be being
   * written). A port may snapshot after `create` answers (the model call overlaps it); tools
   * wait for this before they run.
   */
  captured?(sessionId: string): Promise<void>;
  /**
   * The turn's work is done: records its end-of-turn checkpoint (snapshot, row and
   * `checkpoint.created` event). The runtime awaits it before `turn.completed`, so every event
   * of a turn precedes its end in the log (another process waiting for the turn can't interleave).
   */
  turnEnded?(sessionId: string): Promise<void>;
}

/**
 * The fallback: a Checkpoint row with no snapshot. The number is taken from the store (any
 * process can take the next one) and the row written behind the loop, one after another, fenced
 * on the running turn's claim (`fences`: the event log's, server/leases/fence.ts).
 */
export function storeCheckpoints(db: store.Db, fences?: Pick<EventLog, "fenceOf">): CheckpointPort {
  let writes: Promise<unknown> = Promise.resolve();
  return {
    async create({ workspace: _workspace, ...input }) {
      const fence = fences?.fenceOf(input.sessionId);
      const number = await store.durably(() => store.takeCheckpointNumber(db, input.sessionId));
      const id = `cp_${randomUUID()}`;
      writes = writes.then(() =>
        store
          .durably(() => store.createCheckpoint(db, { ...input, id, number }, fence))
          .catch((error: unknown) => {
            if (fence && store.isFenced(error)) return fence.lose(error); // the turn stops and says why
            // The marker in the history still works for D-Mail; only the timeline row is missing.
            console.error(`worldline: checkpoint ${number} of session ${input.sessionId} was not saved:`, error);
          }),
      );
      return { id, number };
    },
  };
}
