import type { SessionEvent } from "../protocol";

/** Where the loop sends its typed events; the runtime binds it to the session's event log. */
export interface TurnEmitter {
  readonly turnId: string;
  event(event: SessionEvent): void;
}
