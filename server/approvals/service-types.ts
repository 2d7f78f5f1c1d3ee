import type { Liveness } from "../leases";
import type { GateOutcome } from "../agent";
import type { ApprovalDecisionKind } from "../protocol";
import type { EventLog, Sessions } from "../sessions";
import type * as store from "../store";

/** What the approval service is built from, takes and keeps per waiting call (server/approvals/service.ts). */

export interface ApprovalServiceDeps {
  db: store.Db;
  log: EventLog;
  sessions: Sessions;
  /** This process's lease (server/leases): requests it asks carry it, so others leave them alone. */
  ownerId?: string;
  /** Whether a process (an Owner id) is alive (server/leases): a decision reaches a live one or is refused. */
  liveness?: (ownerId: string) => Promise<Liveness>;
}

/** A sudo password wanted by a running tool call. */
export interface PasswordRequest {
  sessionId: string;
  turnId: string;
  toolCallId: string;
  tool: string;
  prompt: string;
  signal: AbortSignal;
  onAsked?: (approvalId: string) => Promise<void>;
}

export interface DecideInput {
  decision: ApprovalDecisionKind;
  /** With `reject`: the model sees it and continues; without, the turn ends. */
  feedback?: string;
  /** Who decided, for the history: "web", "http", "acp", … */
  decidedBy: string;
}

/** Runs a store call while the store does not answer, for as long as its caller can wait (server/store/durable.ts). */
export type Retry = <T>(call: () => Promise<T>) => Promise<T>;

export type Outcome = GateOutcome;

export interface Waiter {
  kind: "tool" | "password";
  sessionId: string;
  turnId: string;
  toolCallId: string;
  tool: string;
  /** The pattern "allow for this session" records. */
  scope: string | null;
  resolve(outcome: Outcome | null): void;
}
