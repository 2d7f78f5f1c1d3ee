import type { EventEnvelope } from "../../../protocol";
import { ChatStreamBody } from "../../../protocol";
import { WorldlineError } from "../../../errors";
import { readJson } from "../io";
import type { Route } from "../router";
import { toPublicEvents } from "../sse-map";
import { SseStream } from "../sse";

export const chatRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/v1/chat/stream",
    handler: async ({ services, req, res }) => {
      const body = ChatStreamBody.parse(await readJson(req));
      const session = body.session_id
        ? await services.sessions.get(body.session_id)
        : body.workspace
          ? await services.sessions.create({ workspace: body.workspace, yolo: body.yolo })
          : null;
      if (!session)
        throw new WorldlineError("request:invalid", "Give a session_id, or a workspace to start a new session in.");
      if (body.mode && body.mode !== session.mode) await services.sessions.update(session.id, { mode: body.mode });

      // Subscribe before starting so no event of the turn is missed.
      const buffered: EventEnvelope[] = [];
      let taskId: string | undefined;
      let sse: SseStream | undefined;
      const forward = (event: EventEnvelope) => {
        if (!sse || !taskId) return void buffered.push(event);
        const turnId = (event.payload as { turnId?: string }).turnId;
        if (turnId !== taskId) return;
        for (const { event: name, data } of toPublicEvents(event, { taskId, sessionId: session.id }))
          sse.send(name, data);
        // A request for a human ends the stream (status waiting_for_approval / waiting_for_password);
        // POST /tasks/:task_id/continue/stream (or password/stream) resumes the same turn.
        if (event.type === "turn.completed" || event.type === "approval.requested") finish();
      };
      const unsubscribe = services.log.subscribe(session.id, forward);
      const finish = () => {
        unsubscribe();
        sse?.end();
      };
      try {
        const started = await services.turns.prompt(session.id, body.message, { reasoning: body.reasoning });
        taskId = started.turnId;
      } catch (error) {
        unsubscribe();
        throw error;
      }
      sse = new SseStream(res);
      // The client leaving does not cancel the task: scripts can read its events afterwards.
      sse.onClose(unsubscribe);
      for (const event of buffered.splice(0)) forward(event);
      return undefined;
    },
  },
];
