import type { ServerResponse } from "node:http";
import type { EventEnvelope } from "../../../protocol";
import { ContinueTaskBody, PasswordTaskBody } from "../../../protocol";
import { WorldlineError } from "../../../errors";
import type { BridgeServices } from "../../services";
import { readJson } from "../io";
import { deciderOfRequest } from "../../people";
import type { Route } from "../router";
import { toPublicEvents } from "../sse-map";
import { SseStream } from "../sse";

/**
 * Resuming a task over SSE. `chat/stream` ends at `tool_approval_requested` /
 * `tool_password_requested`; these routes apply the answer and stream the rest
 * of the same turn, ending again at the next request or at `done`.
 */
export const taskRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/v1/tasks/:task_id/continue/stream",
    handler: async ({ services, params, req, res }) => {
      const body = ContinueTaskBody.parse(await readJson(req));
      const { sessionId, afterSeq, approval } = await locate(services, params.task_id, body.approval_id);
      if (approval.kind === "password") {
        throw new WorldlineError(
          "approval:invalid",
          "This request asks for a password; use POST /api/v1/tasks/:task_id/password/stream.",
        );
      }
      // Decided elsewhere already (another tab, the approvals page): just resume the stream.
      // An explicit decision on a decided request is a conflict (409) like any other late decision.
      if (approval.status === "pending" || body.decision) {
        await services.approvals.decide(approval.approval_id, {
          decision: body.decision ?? "allow_once",
          feedback: body.feedback,
          decidedBy: deciderOfRequest(req, services, "http"),
        });
      }
      streamTask(services, res, sessionId, params.task_id, afterSeq);
      return undefined;
    },
  },
  {
    method: "POST",
    path: "/api/v1/tasks/:task_id/password/stream",
    handler: async ({ services, params, req, res }) => {
      const body = PasswordTaskBody.parse(await readJson(req));
      const { sessionId, afterSeq, approval } = await locate(services, params.task_id, body.approval_id);
      if (approval.kind !== "password") {
        throw new WorldlineError(
          "approval:invalid",
          "This request is not a password request; use POST /api/v1/tasks/:task_id/continue/stream.",
        );
      }
      await services.approvals.providePassword(approval.approval_id, body.password, "http");
      streamTask(services, res, sessionId, params.task_id, afterSeq);
      return undefined;
    },
  },
  {
    method: "GET",
    path: "/api/v1/tasks/:task_id/events",
    handler: async ({ services, params }) => {
      await services.approvals.task(params.task_id);
      const events = await services.approvals.taskEvents(params.task_id);
      return events.map((event) => ({
        seq: event.seq,
        type: event.type,
        payload: event.payload,
        created_at: event.createdAt,
      }));
    },
  },
];

/** The task's session and the seq of the request it waits on (the stream resumes after it). */
async function locate(services: BridgeServices, taskId: string, approvalId: string) {
  const task = await services.approvals.task(taskId);
  const approval = await services.approvals.get(approvalId);
  if (approval.task_id !== task.id) {
    throw new WorldlineError("approval:not_found", `Approval ${approvalId} does not belong to task ${taskId}.`);
  }
  await services.sessions.get(task.sessionId);
  const events = await services.approvals.taskEvents(task.id);
  const requested = events.find(
    (event) => event.type === "approval.requested" && event.payload.approvalId === approvalId,
  );
  return { sessionId: task.sessionId, afterSeq: requested?.seq ?? 0, approval };
}

/** Replays the task's events after `afterSeq`, then live ones, without gaps or duplicates. */
function streamTask(
  services: BridgeServices,
  res: ServerResponse,
  sessionId: string,
  taskId: string,
  afterSeq: number,
): void {
  const sse = new SseStream(res);
  let sentUpTo = afterSeq;
  let replaying = true;
  const held: EventEnvelope[] = [];
  const send = (event: EventEnvelope) => {
    if (sse.isClosed || event.seq <= sentUpTo) return;
    sentUpTo = event.seq;
    if ((event.payload as { turnId?: string }).turnId !== taskId) return;
    for (const { event: name, data } of toPublicEvents(event, { taskId, sessionId })) sse.send(name, data);
    if (event.type === "turn.completed" || event.type === "approval.requested") finish();
  };
  const unsubscribe = services.log.subscribe(sessionId, (event) => (replaying ? held.push(event) : send(event)));
  const finish = () => {
    unsubscribe();
    sse.end();
  };
  sse.onClose(unsubscribe);
  void services.log
    .read(sessionId, afterSeq)
    .then((past) => {
      for (const event of past) send(event);
      for (const event of held.splice(0)) send(event);
      replaying = false;
    })
    .catch((error: unknown) => {
      sse.send("error", {
        task_id: taskId,
        code: "bridge:internal",
        message: error instanceof Error ? error.message : String(error),
      });
      finish();
    });
}
