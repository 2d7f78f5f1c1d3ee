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
}

/** The fallback: a Checkpoint row with no snapshot. */
export function storeCheckpoints(db: store.Db): CheckpointPort {
  return {
    async create(input) {
      const row = await store.createCheckpoint(db, input);
      return { id: row.id, number: row.number };
    },
  };
}
