import { errorMessage } from "../errors";

/** An idle session nobody watches is freed after this long; its next prompt rebuilds what it needs. */
export const SESSION_IDLE_RELEASE_MS = 10 * 60_000;

/** How often idle sessions are looked for. */
const SWEEP_INTERVAL_MS = 60_000;

/** Something that holds memory or processes per session, and can let them go. */
export interface SessionResource {
  name: string;
  /** `idle`: the session may come back (keep what its owner set); `deleted`: it is gone. */
  forget(sessionId: string, why: "deleted" | "idle"): unknown;
}

/**
 * Frees per-session state in one place: everything at once when a session is deleted, and
 * what an idle, unwatched session holds (its history in memory, an external agent process,
 * MCP servers) after SESSION_IDLE_RELEASE_MS. Without it a long-running bridge keeps every
 * session it ever served.
 */
export class SessionJanitor {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: {
      resources: SessionResource[];
      /** Sessions idle (no turn running or queued) for at least `idleMs`. */
      idleSessions(idleMs: number): string[];
      /** True while a client follows the session: it stays warm. */
      watched(sessionId: string): boolean;
      idleMs?: number;
    },
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Frees what every resource holds for the session; one failing does not keep the others. */
  async forget(sessionId: string, why: "deleted" | "idle"): Promise<void> {
    await Promise.all(
      this.deps.resources.map(async (resource) => {
        try {
          await resource.forget(sessionId, why);
        } catch (error) {
          // Freeing is best effort: the session is gone (or idle) whatever one holder says.
          console.error(`[worldline] freeing ${resource.name} of session ${sessionId} failed: ${errorMessage(error)}`);
        }
      }),
    );
  }

  /** Frees idle sessions nobody watches; returns their ids. */
  async sweep(): Promise<string[]> {
    const idle = this.deps.idleSessions(this.deps.idleMs ?? SESSION_IDLE_RELEASE_MS);
    const freed = idle.filter((id) => !this.deps.watched(id));
    for (const id of freed) await this.forget(id, "idle");
    return freed;
  }
}
