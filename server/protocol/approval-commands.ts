import * as z from "zod";
import { ApprovalDecisionKind } from "./approvals";

/** Socket commands of the approval queue (merged into `clientCommands`). */
const CommandId = z.string().min(8).max(64);
const ApprovalId = z.string().min(1).max(64);

export const approvalCommands = {
  /** Starts `approvals.changed` messages for every session; answers with the pending requests. */
  "approvals.subscribe": z.object({ commandId: CommandId.optional() }).strict(),
  "approvals.unsubscribe": z.object({ commandId: CommandId.optional() }).strict(),
  "approval.decide": z
    .object({
      commandId: CommandId,
      approvalId: ApprovalId,
      decision: ApprovalDecisionKind,
      feedback: z.string().max(10_000).optional(),
    })
    .strict(),
  /** Answers a sudo password request; `null` declines. The password is never stored or logged. */
  "approval.password": z
    .object({ commandId: CommandId, approvalId: ApprovalId, password: z.string().max(4096).nullable() })
    .strict(),
} as const;
