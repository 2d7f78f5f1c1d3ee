import type { ApprovalDecisionKind } from "../protocol";
import type { ApprovalDecision, ApprovalNeed, ToolContext, ToolResult } from "../tools/types";

/** The shape of a tool as the loop uses it (server/tools builds these with defineTool). */
export interface AgentTool {
  name: string;
  description: string;
  jsonSchema: Record<string, unknown>;
  needsApproval(rawArgs: string, ctx: ToolContext): Promise<ApprovalNeed>;
  run(rawArgs: string, ctx: ToolContext): Promise<ToolResult>;
}

/** One call waiting at the gate. */
export interface GateRequest {
  sessionId: string;
  turnId: string;
  toolCallId: string;
  tool: string;
  args: unknown;
  need: ApprovalNeed;
  signal: AbortSignal;
  /**
   * A PreToolUse hook approved the call (its command): it counts as "allow once" where the gate
   * would otherwise ask a person, but never past a deny or ask rule or the workspace boundary.
   */
  hookApproved?: string;
  /** Called once a person is asked (the request's row exists), before the call waits: the turn records its run state. */
  onAsked?: (approvalId: string) => Promise<void>;
}

/** How a request a person was asked ended: a decision, or a password (null: declined). */
export type GateOutcome =
  { decision: ApprovalDecisionKind; feedback?: string; decidedBy?: string } | { password: string | null };

/** A request asked before a restart, waited on again by the turn that took it over (server/agent/run-state.ts). */
export interface RejoinRequest {
  approvalId: string;
  sessionId: string;
  turnId: string;
  kind: "tool" | "password";
  /** The pattern "allow for this session" records. */
  scope: string | null;
  signal: AbortSignal;
}

/** The approval gate (server/approvals implements it: rules → yolo → ask). */
export interface ApprovalGate {
  check(request: GateRequest): Promise<ApprovalDecision>;
  /** Asks a human for a password mid-call (sudo); null when declined. Backs `ToolContext.askPassword`. */
  askPassword?(request: Omit<GateRequest, "args" | "need"> & { prompt: string }): Promise<string | null>;
  /** Waits again on a pending request asked before a restart; null when it ended without a decision. */
  rejoin?(request: RejoinRequest): Promise<GateOutcome | null>;
  /**
   * Asks a human whether a turn past a budget may go on (never decided by rules or yolo); true to
   * go on. `args` (spent, limit, which budget) is shown with the request.
   */
  askBudget?(request: {
    sessionId: string;
    turnId: string;
    description: string;
    args: Record<string, unknown>;
    signal: AbortSignal;
    onAsked?: (approvalId: string) => Promise<void>;
  }): Promise<boolean>;
}
