import { errorMessage } from "../errors";
import type { EventEnvelope, TurnOutcome } from "../protocol";
import type { HookEventFields, TurnHooks } from "./hooks-port";

/**
 * `Notification` hooks, in Claude Code's input shape (`message`, `notification_type`, which the
 * entry's matcher matches): when the turn starts waiting on a person, and when it ends waiting
 * for their next prompt.
 *
 * - a tool call or a budget waits in the approvals queue: `permission_prompt` (Allow or Reject);
 * - a command asks for a password: `elicitation_dialog` (the person types something in);
 * - the turn ended, other than by the person's own cancel: `idle_prompt`.
 */
export class NotificationHooks {
  private readonly running = new Set<Promise<unknown>>();
  /** Stops following the log (idempotent: the turn's end does it, and so does its `finally`). */
  readonly unfollow: () => void;

  /** Follows the session's log for the turn's requests (the approvals service appends them, not the turn). */
  constructor(
    private readonly hooks: TurnHooks,
    follow: (listener: (event: EventEnvelope) => void) => () => void,
    turnId: string,
  ) {
    this.unfollow = follow((event) => {
      if (event.type !== "approval.requested" || event.payload.turnId !== turnId) return;
      this.fire(waitingOn(event.payload));
    });
  }

  /** The turn ended: what still runs is awaited, so every hook's transcript line comes before turn.completed. */
  async ended(outcome: TurnOutcome): Promise<void> {
    this.unfollow();
    if (outcome !== "cancelled") {
      this.fire({ notification_type: "idle_prompt", message: "Worldline is waiting for your input" });
    }
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private fire(fields: HookEventFields): void {
    // A Notification hook only tells: its answer changes nothing, and the turn does not wait on it.
    const run = this.hooks
      .run("Notification", fields)
      .catch((error: unknown) =>
        console.error(`[worldline] a Notification hook could not run: ${errorMessage(error)}`),
      );
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }
}

function waitingOn(request: { tool: string; kind?: "tool" | "password"; description: string }): HookEventFields {
  if (request.kind === "password") {
    return { notification_type: "elicitation_dialog", message: `Worldline needs a password: ${request.description}` };
  }
  if (request.tool === "budget") {
    return {
      notification_type: "permission_prompt",
      message: `Worldline needs you to allow more spend: ${request.description}`,
    };
  }
  return { notification_type: "permission_prompt", message: `Worldline needs your permission to use ${request.tool}` };
}
