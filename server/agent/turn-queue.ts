import { WorldlineError } from "../errors";
import type * as store from "../store";
import type { TurnFence } from "../leases";
import type { Session } from "../sessions";
import type { TurnResult } from "./loop";
import type { RunState } from "./run-state";

/** How one prompt is to be run (server/agent/runtime.ts `prompt`). */
export interface PromptOptions {
  reasoning?: "on" | "off";
  /** Images for the model, as `data:` (or http) URLs; they go with the first user message of the turn. */
  images?: string[];
  /** Thumbnails (`data:` URLs) for the transcript, by index of `images`; the event log keeps these, not the images. */
  imagePreviews?: (string | undefined)[];
  /** Summarise the context instead of asking the model; `focus` says what the summary must keep. */
  compact?: { focus?: string };
}

/**
 * Turns running at once across all sessions by default: each holds a model stream, tools and child
 * processes; two cores go round only so far. `WORLDLINE_MAX_TURNS` sets it per bridge.
 */
export const MAX_CONCURRENT_TURNS = 8;
/** What a prompt refused at capacity is told to wait before trying again (Retry-After), in seconds. */
const CAPACITY_RETRY_AFTER_S = 5;

/** This bridge's turn capacity: WORLDLINE_MAX_TURNS, or MAX_CONCURRENT_TURNS. Shown in /api/v1/health. */
export function turnCapacity(): number {
  const value = Number(process.env.WORLDLINE_MAX_TURNS);
  return Number.isInteger(value) && value > 0 ? value : MAX_CONCURRENT_TURNS;
}

/** Prompts waiting behind a session's running turn: more is a stuck script, not a person typing. */
export const MAX_QUEUED_TURNS_PER_SESSION = 20;

/** A prompt on its way: running, or waiting behind the session's running turn. */
export interface PendingTurn {
  sessionId: string;
  turnId: string;
  number: number;
  prompt: string;
  options: PromptOptions;
  controller: AbortController;
  done: Promise<TurnResult>;
  settle: (result: TurnResult) => void;
  /** The session as read by `prompt`, for a turn that starts at once (a queued one re-reads it). */
  session?: Session;
  /** The session's claim this turn runs under (server/leases); its writes are fenced on it. */
  claim?: store.Claim;
  /** The claim as the turn's writers see it: lost once the store refuses one of them (server/leases/fence.ts). */
  fence?: TurnFence;
  /** A turn taken over while it waited on a person: it goes on from here (server/agent/run-state.ts). */
  resume?: RunState;
}

interface SessionState {
  active?: PendingTurn;
  queue: PendingTurn[];
  steering: string[];
  /** A rewind is rewriting the history: prompts wait in the queue. */
  rewriting?: boolean;
}

/**
 * Who runs and who waits: one turn at a time per session (later prompts queue behind it),
 * at most MAX_CONCURRENT_TURNS across sessions, steering messages held for the running turn.
 * Pure bookkeeping: the runtime starts and finishes the turns it hands out.
 */
export class TurnQueue {
  private readonly states = new Map<string, SessionState>();
  /** Prompts between the limit check and their start (the turn row is written in between). */
  private starting = 0;

  active(sessionId: string): PendingTurn | undefined {
    return this.states.get(sessionId)?.active;
  }

  queued(sessionId: string): PendingTurn[] {
    return this.states.get(sessionId)?.queue ?? [];
  }

  /** Sessions with any state held (for tests and the idle sweep). */
  sessions(): string[] {
    return [...this.states.keys()];
  }

  /** True when the session has nothing running, queued, steering or rewriting: its state can go. */
  idle(sessionId: string): boolean {
    const state = this.states.get(sessionId);
    return !state || (!state.active && !state.rewriting && state.queue.length === 0 && state.steering.length === 0);
  }

  /** Refuses a prompt that would pass MAX_QUEUED_TURNS_PER_SESSION or the turn capacity. */
  checkLimits(sessionId: string, runningElsewhere: () => boolean): void {
    const state = this.states.get(sessionId);
    if (state && state.queue.length >= MAX_QUEUED_TURNS_PER_SESSION) {
      throw new WorldlineError(
        "session:busy",
        `${MAX_QUEUED_TURNS_PER_SESSION} prompts are already waiting in this session; wait for them or cancel.`,
      );
    }
    if (state?.active || state?.rewriting) return;
    if (runningElsewhere()) {
      // Its events and approvals come from that process (server/sessions/event-log.ts, "Several processes").
      throw new WorldlineError(
        "session:busy",
        "A turn of this session is running in another Worldline process (worldline acp or worldline run); " +
          "wait for it to finish or cancel it there.",
      );
    }
    const running = [...this.states.values()].filter((other) => other.active).length + this.starting;
    const capacity = turnCapacity();
    if (running >= capacity) {
      // 429, not 409: the session is fine, the bridge is full; a client retries after Retry-After.
      throw new WorldlineError(
        "runtime:at_capacity",
        `This bridge is at its turn capacity (${capacity} turns running across sessions, WORLDLINE_MAX_TURNS); try again in a few seconds.`,
        { details: { capacity, retry_after_s: CAPACITY_RETRY_AFTER_S } },
      );
    }
  }

  /** Turns running now across sessions (health). */
  runningCount(): number {
    return [...this.states.values()].filter((state) => state.active).length;
  }

  /** Counts a prompt between its limit check and `admit`, so concurrent prompts see each other. */
  async reserve<T>(work: () => Promise<T>): Promise<T> {
    this.starting += 1;
    try {
      return await work();
    } finally {
      this.starting -= 1;
    }
  }

  /**
   * Makes the turn active, or queues it when a turn runs or a rewind is under way; returns
   * the queue position (0: it is active now). Checked and set with no await in between, so two
   * prompts can never both start.
   */
  admit(pending: PendingTurn): number {
    const state = this.state(pending.sessionId);
    if (state.active || state.rewriting) return state.queue.push(pending);
    state.active = pending;
    return 0;
  }

  /** Holds a steering message for the running turn; false when none runs. */
  steer(sessionId: string, text: string): boolean {
    const state = this.states.get(sessionId);
    if (!state?.active) return false;
    state.steering.push(text);
    return true;
  }

  takeSteering(sessionId: string): string[] {
    return this.states.get(sessionId)?.steering.splice(0) ?? [];
  }

  /**
   * Ends the session's active turn: returns the steering that came too late for it and the
   * next queued turn, which is active from here on.
   */
  finish(sessionId: string): { late: string[]; next?: PendingTurn } {
    const state = this.state(sessionId);
    const late = state.steering.splice(0);
    state.active = state.queue.shift();
    return { late, next: state.active };
  }

  /** Marks a rewind under way; refused while a turn runs (or another rewind does). */
  beginRewrite(sessionId: string): void {
    const state = this.state(sessionId);
    if (state.active || state.rewriting) {
      throw new WorldlineError(
        "session:busy",
        "A turn is running in this session; cancel it or wait for it before rewinding.",
      );
    }
    state.rewriting = true;
  }

  /** Ends the rewind; returns the first queued turn, active from here on. */
  endRewrite(sessionId: string): PendingTurn | undefined {
    const state = this.state(sessionId);
    state.rewriting = false;
    state.active = state.queue.shift();
    return state.active;
  }

  /** Shutdown: empties every queue and drops held steering; returns the dropped turns and the running ones. */
  drain(): { dropped: PendingTurn[]; running: PendingTurn[] } {
    const dropped: PendingTurn[] = [];
    const running: PendingTurn[] = [];
    for (const state of this.states.values()) {
      dropped.push(...state.queue.splice(0));
      state.steering.length = 0;
      if (state.active) running.push(state.active);
    }
    return { dropped, running };
  }

  /** Empties one session's queue and drops its held steering (the session is being deleted); returns the dropped turns. */
  dropQueued(sessionId: string): PendingTurn[] {
    const state = this.states.get(sessionId);
    if (!state) return [];
    state.steering.length = 0;
    return state.queue.splice(0);
  }

  /** Forgets an idle session's state (delete, or idle sweep); a busy one keeps it. */
  release(sessionId: string): boolean {
    if (!this.idle(sessionId)) return false;
    this.states.delete(sessionId);
    return true;
  }

  private state(sessionId: string): SessionState {
    let state = this.states.get(sessionId);
    if (!state) {
      state = { queue: [], steering: [] };
      this.states.set(sessionId, state);
    }
    return state;
  }
}
