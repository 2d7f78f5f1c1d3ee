import type { SessionEvent } from "../protocol";

/** Tool states in which a call is still working (or waits on a person): not idle. */
const BUSY_STATES = new Set(["pending", "waiting_approval", "running"]);
/** The watch looks this often at most; an idle limit is met within this much of its time. */
const MAX_CHECK_EVERY_MS = 5_000;

/**
 * Ends a turn on inactivity, not on a wall clock: no model output and no running
 * tool for `idleMs`. Every event the turn emits counts as activity; a tool call counts from its
 * start to its end however quiet it is, and so does a wait on a person (`hold`).
 */
export class IdleWatch {
  private last = Date.now();
  private readonly busy = new Set<string>();
  private holds = 0;
  private readonly timer: NodeJS.Timeout;
  fired = false;

  constructor(
    private readonly idleMs: number,
    onIdle: () => void,
  ) {
    this.timer = setInterval(
      () => {
        if (this.fired || this.busy.size > 0 || this.holds > 0 || Date.now() - this.last < idleMs) return;
        this.fired = true;
        onIdle();
      },
      Math.max(10, Math.min(idleMs / 4, MAX_CHECK_EVERY_MS)),
    );
    this.timer.unref();
  }

  observe(event: SessionEvent): void {
    this.last = Date.now();
    if (event.type === "tool.call") this.busy.add(event.payload.toolCallId);
    else if (event.type === "tool.state") {
      if (BUSY_STATES.has(event.payload.state)) this.busy.add(event.payload.toolCallId);
      else this.busy.delete(event.payload.toolCallId);
    }
  }

  /** Not idle while `waiting` (a person deciding): the clock starts again when it settles. */
  async hold<T>(waiting: Promise<T>): Promise<T> {
    this.holds++;
    try {
      return await waiting;
    } finally {
      this.holds--;
      this.last = Date.now();
    }
  }

  /** Minutes or seconds, as the notice says it. */
  describe(): string {
    const ms = this.idleMs;
    return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1_000)} s`;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
