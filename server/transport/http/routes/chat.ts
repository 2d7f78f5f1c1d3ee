import type { EventEnvelope } from "../../../protocol";
import { ChatStreamBody } from "../../../protocol";
import { WorldlineError } from "../../../errors";
import { readJson } from "../io";
import type { Route } from "../router";
import { toPublicEvents } from "../sse-map";
import { SseStream } from "../sse";
import { claimSession, personOfRequest } from "../../people";
import { mayDrive } from "../../../people";

export const chatRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/v1/chat/stream",
    handler: async ({ services, req, res }) => {
      const body = ChatStreamBody.parse(await readJson(req));
      const person = personOfRequest(req);
      // The session is named in the body, so the transport's check before the route cannot see it:
      // prompting needs what prompting on the session's own routes needs (drive or owner).
      if (person && body.session_id) {
        const level = await services.people.levelOn(person.id, body.session_id);
        if (!level) throw new WorldlineError("session:not_found", "No session with that id.");
        if (!mayDrive(level)) throw new WorldlineError("auth:forbidden", "You can only view this session.");
        // A mode is a session setting: changed by its owner or an admin (PATCH /sessions/:id), never by a drive share.
        if (body.mode && level !== "owner") {
          const current = await services.sessions.get(body.session_id);
          if (body.mode !== current.mode)
            throw new WorldlineError("auth:forbidden", "Only the session's owner or an admin can switch its mode.");
        }
      }
      const session = body.session_id
        ? await services.sessions.get(body.session_id)
        : body.workspace
          ? await services.sessions.create({ workspace: body.workspace, yolo: body.yolo, role: person?.role })
          : null;
      if (session && !body.session_id) await claimSession(req, services, session.id);
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
