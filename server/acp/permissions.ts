import * as acp from "@agentclientprotocol/sdk";
import type { EventEnvelope, EventPayload } from "../protocol";
import { describeToolCall } from "./describe";

/** What ACP needs of the approval queue (server/approvals implements it). */
export interface ApprovalsPort {
  decide(
    approvalId: string,
    input: { decision: "allow_once" | "allow_session" | "reject"; feedback?: string; decidedBy: string },
  ): Promise<unknown>;
}

export const PERMISSION_OPTIONS: acp.PermissionOption[] = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Allow for this session", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

/** A client's answer as a queue decision; a cancelled or unknown outcome is a rejection. */
export function decisionFor(response: acp.RequestPermissionResponse): "allow_once" | "allow_session" | "reject" {
  if (response.outcome.outcome !== "selected") return "reject";
  if (response.outcome.optionId === "allow_once") return "allow_once";
  if (response.outcome.optionId === "allow_always") return "allow_session";
  return "reject";
}

/**
 * Asks the ACP client about one pending approval and records its answer in the
 * queue. `decidedElsewhere` aborts when another tab or the /approvals page
 * answered first: the client's question is then withdrawn ($/cancel_request).
 */
async function askClient(input: {
  client: acp.AgentContext;
  sessionId: string;
  workspace: string;
  request: EventPayload<"approval.requested">;
  approvals: ApprovalsPort;
  decidedElsewhere: AbortSignal;
}): Promise<void> {
  const { request } = input;
  const shown = describeToolCall(request.tool, request.args, input.workspace);
  let response: acp.RequestPermissionResponse;
  try {
    response = await input.client.request(
      acp.methods.client.session.requestPermission,
      {
        sessionId: input.sessionId,
        toolCall: {
          toolCallId: request.toolCallId,
          title: request.kind === "password" ? `Password needed: ${request.description}` : shown.title,
          kind: shown.kind,
          status: "pending",
          rawInput: request.args,
          locations: shown.locations,
          content: [{ type: "content", content: { type: "text", text: request.description } }],
        },
        options: PERMISSION_OPTIONS,
      },
      { cancellationSignal: input.decidedElsewhere, stopWaitingOnCancel: true },
    );
  } catch (error) {
    if (input.decidedElsewhere.aborted) return;
    // The client could not answer (gone, or it failed): a question nobody can answer is a no.
    console.error("[worldline] session/request_permission failed:", error instanceof Error ? error.message : error);
    response = { outcome: { outcome: "cancelled" } };
  }
  if (input.decidedElsewhere.aborted) return;
  try {
    await input.approvals.decide(request.approvalId, { decision: decisionFor(response), decidedBy: "acp" });
  } catch (error) {
    // Already decided from another place (409): the first decision wins, nothing to do.
    console.error("[worldline] recording the ACP decision failed:", error instanceof Error ? error.message : error);
  }
}

/**
 * The permission requests of one prompt: each `approval.requested` becomes a question to the
 * client (not awaited in the event chain: parallel calls may each wait for an answer), withdrawn
 * when `approval.decided` says another place answered first.
 */
export class PromptPermissions {
  private readonly asked = new Map<string, AbortController>();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly target: {
      client: acp.AgentContext;
      sessionId: string;
      workspace: string;
      approvals: ApprovalsPort;
    },
  ) {}

  observe(event: EventEnvelope): void {
    if (event.type === "approval.requested") {
      const decidedElsewhere = new AbortController();
      this.asked.set(event.payload.approvalId, decidedElsewhere);
      const asking = askClient({ ...this.target, request: event.payload, decidedElsewhere: decidedElsewhere.signal });
      this.pending.add(asking);
      void asking.finally(() => this.pending.delete(asking));
    }
    if (event.type === "approval.decided") {
      this.asked.get(event.payload.approvalId)?.abort();
      this.asked.delete(event.payload.approvalId);
    }
  }

  /** The turn is over: questions still open are withdrawn, and every one has settled. */
  async settle(): Promise<void> {
    for (const controller of this.asked.values()) controller.abort();
    await Promise.allSettled([...this.pending]);
  }
}
