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
}

/** The approval gate (server/approvals implements it: rules → yolo → ask). */
export interface ApprovalGate {
  check(request: GateRequest): Promise<ApprovalDecision>;
  /** Asks a human for a password mid-call (sudo); null when declined. Backs `ToolContext.askPassword`. */
  askPassword?(request: Omit<GateRequest, "args" | "need"> & { prompt: string }): Promise<string | null>;
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
  }): Promise<boolean>;
}
