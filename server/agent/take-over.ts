import { errorMessage } from "../errors";
import * as store from "../store";
import { canResume, parseRunState, type RunState } from "./run-state";

/** A waiting turn whose owner is gone, with the run state it can go on from. */
export interface ResumableTurn {
  turn: store.WaitingTurn;
  state: RunState;
}

/**
 * Turns of owners that are gone (none of `live`) that wait on a person and can go on after a
 * restart (server/agent/run-state.ts): the orphan sweep leaves them, and their requests, waiting.
 */
export async function resumableTurns(db: store.Db, live: string[]): Promise<ResumableTurn[]> {
  const found: ResumableTurn[] = [];
  for (const turn of await store.orphanWaitingTurns(db, live)) {
    const state = parseRunState(turn.runState);
    if (canResume(state, turn.pending)) found.push({ turn, state });
  }
  return found;
}

/** The ids of resumable turns, for a process that does not take them over (or cannot yet). */
export async function resumableTurnIds(db: store.Db, live: string[]): Promise<Set<string>> {
  return new Set((await resumableTurns(db, live)).map(({ turn }) => turn.id));
}

/**
 * Takes over the resumable turns of owners that are gone: each passes, with its session's claim
 * and its pending requests, to `ownerId` (one transaction; of two bridges sweeping at once one
 * wins) and is started here by `start`. Returns the ids of every resumable turn, taken here or
 * not, so the sweep interrupts none of them.
 */
export async function takeOverWaitingTurns(
  deps: { db: store.Db; ownerId: string; start(found: ResumableTurn, claim: store.Claim): Promise<void> },
  live: string[],
): Promise<Set<string>> {
  const found = await resumableTurns(deps.db, live);
  for (const resumable of found) {
    const { turn } = resumable;
    try {
      const claim = await store.adoptWaitingTurn(deps.db, turn, deps.ownerId, live);
      if (claim) await deps.start(resumable, claim);
    } catch (error) {
      // Left to the next sweep (this bridge's or another's); the turn still waits.
      console.error(`[worldline] taking over waiting turn ${turn.id} failed: ${errorMessage(error)}`);
    }
  }
  return new Set(found.map(({ turn }) => turn.id));
}
