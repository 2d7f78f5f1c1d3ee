import type { GateRequest } from "../agent";
import { errorMessage, WorldlineError } from "../errors";
import type { ApprovalsQuery, EventEnvelope } from "../protocol";
import * as store from "../store";
import type { ApprovalDecision } from "../tools/types";
import { matchRules } from "./rule-engine";
import type { ApprovalServiceDeps, Retry } from "./service-types";
import { toApprovalView } from "./views";

/**
 * What the approval service decides or reads without its waiting calls: the policy before
 * anyone is asked (rules, then yolo), the queue's queries, and the start-up sweep of
 * requests whose owner is gone. The asking and waiting stay in service.ts.
 */

/**
 * Rules → "needs nothing" → yolo; undefined when a human must be asked. `read` runs the two reads
 * (the turn's durable reader: a store outage pauses the call instead of failing it).
 */
export async function decideByPolicy(
  deps: ApprovalServiceDeps,
  request: GateRequest,
  read: Retry,
): Promise<ApprovalDecision | undefined> {
  const { need } = request;
  // The row alone: a policy decision needs no catch-up of the session's event log.
  const session = await read(() => store.getSession(deps.db, request.sessionId));
  if (!session) throw new WorldlineError("session:not_found", `No session with id "${request.sessionId}".`);
  const rules = await read(() => store.listApplicableRules(deps.db, session.id, session.workspaceId));
  const match = matchRules(rules, { tool: request.tool, subject: need.subject, compound: need.compound });
  if (match?.action === "deny") {
    const { scope, tool, pattern } = match.rule;
    return {
      approved: false,
      feedback: `Blocked by a ${scope} deny rule (${tool}: \`${pattern}\`). Do not retry it; find another way or ask the user.`,
      decidedBy: ruleName(match.rule),
    };
  }
  if (match?.action === "allow") return { approved: true, decidedBy: ruleName(match.rule) };
  if (match?.action === "ask") return undefined;
  if (need.level === "none") return { approved: true, decidedBy: "no approval needed" };
  // Yolo approves what stays inside the workspace; `always` (outside, sensitive, privileged) still asks.
  if (need.level === "ask" && session.yolo) return { approved: true, decidedBy: "yolo" };
  // A hook's approval stands in for a person's "allow once" inside the workspace; `always` still asks.
  if (need.level === "ask" && request.hookApproved)
    return { approved: true, decidedBy: `hook: ${request.hookApproved}` };
  return undefined;
}

/** How the audit log names a rule that decided: `rule: session deny shell rm *`. */
function ruleName(rule: { scope: string; action: string; tool: string; pattern: string }): string {
  return `rule: ${rule.scope} ${rule.action} ${rule.tool} ${rule.pattern}`;
}

/** Pending requests oldest first; decided ones ("decided", "all" or one status) newest first. */
export function listApprovalRows(db: store.Db, query: Partial<ApprovalsQuery>): Promise<store.ApprovalRow[]> {
  const status = query.status ?? "pending";
  const statuses =
    status === "all"
      ? undefined
      : status === "decided"
        ? ["approved", "rejected", "interrupted", "cancelled"]
        : [status];
  return store.listApprovals(db, {
    status: statuses,
    sessionId: query.session_id,
    limit: query.limit,
    newestFirst: status !== "pending",
  });
}

export async function taskOf(db: store.Db, taskId: string): Promise<{ id: string; sessionId: string; status: string }> {
  const turn = await store.getTurn(db, taskId);
  if (!turn) throw new WorldlineError("task:not_found", `No task with id "${taskId}".`);
  return { id: turn.id, sessionId: turn.sessionId, status: turn.status };
}

export async function eventsOfTask(deps: ApprovalServiceDeps, taskId: string): Promise<EventEnvelope[]> {
  await deps.log.flush();
  const rows = await store.readTurnEvents(deps.db, taskId);
  return rows.map(
    (row) =>
      ({
        seq: row.seq,
        type: row.type,
        payload: JSON.parse(row.payload),
        createdAt: row.createdAt.toISOString(),
      }) as EventEnvelope,
  );
}

/** Marks pending requests of gone owners interrupted, each with an `approval.decided` event. */
export async function interruptOrphanRequests(
  deps: ApprovalServiceDeps,
  live: string[],
  decider: string,
  keptTurns: ReadonlySet<string>,
): Promise<number> {
  let count = 0;
  for (const orphan of await store.orphanApprovals(deps.db, live)) {
    if (orphan.turnId !== null && keptTurns.has(orphan.turnId)) continue;
    if (!(await store.interruptOrphanApproval(deps.db, orphan.id, orphan.ownerId, decider))) continue;
    count += 1;
    await deps.log.open(orphan.sessionId);
    deps.log.append(
      orphan.sessionId,
      {
        type: "approval.decided",
        payload: {
          approvalId: orphan.id,
          toolCallId: orphan.toolCallId,
          turnId: orphan.turnId ?? undefined,
          status: "interrupted",
          decidedBy: decider,
        },
      },
      orphan.turnId ?? undefined,
    );
  }
  if (count > 0) await deps.log.flush();
  return count;
}

export async function notPendingError(db: store.Db, approvalId: string): Promise<WorldlineError> {
  const row = await store.getApproval(db, approvalId);
  if (!row) return new WorldlineError("approval:not_found", `No approval request with id "${approvalId}".`);
  const by = row.decidedBy ? ` by ${row.decidedBy}` : "";
  return new WorldlineError("approval:already_decided", `This request was already ${row.status}${by}.`, {
    details: toApprovalView(row),
  });
}

/**
 * "Allow for this session": the rule the next matching call passes by, written through `retry`. If
 * the store refuses it for good, the decision still stands (the waiting call resumes with it) and
 * the next matching call asks again: logged, not thrown.
 */
export async function allowForSession(
  db: store.Db,
  row: store.ApprovalRow,
  scope: string,
  retry: Retry,
): Promise<void> {
  const rule = { scope: "session", sessionId: row.sessionId, tool: row.tool, pattern: scope, action: "allow" };
  try {
    await retry(() => store.createRule(db, rule));
  } catch (error) {
    console.error(
      `[worldline] the session rule "${scope}" of approval ${row.id} was not stored (${errorMessage(error)}); the next matching call asks again`,
    );
  }
}

/** A password request decided like a tool call. */
export function passwordExpected(): WorldlineError {
  return new WorldlineError(
    "approval:invalid",
    "This request asks for a password: answer it with the password (POST /api/v1/tasks/:task_id/password/stream) or reject it.",
  );
}

export function reportPollError(error: unknown): void {
  console.error(
    "[worldline] reading the approval queue failed; will retry:",
    error instanceof Error ? error.message : error,
  );
}

/** A password answer must go to a password request, and to one this process waits on (or decline it). */
export function checkPasswordAnswer(
  existing: store.ApprovalRow | null,
  answer: { waiting: boolean; declining: boolean },
): void {
  if (existing && toApprovalView(existing).kind !== "password") {
    throw new WorldlineError(
      "approval:invalid",
      "This request is not a password request; decide it with POST /api/v1/approvals/:id.",
    );
  }
  if (!answer.waiting && !answer.declining && existing?.status === "pending") {
    throw new WorldlineError(
      "approval:conflict",
      "This password is asked for by a turn running in another Worldline process (worldline acp or run); " +
        "answer it there, or reject it here.",
    );
  }
}
