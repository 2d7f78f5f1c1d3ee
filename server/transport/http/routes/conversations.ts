import {
  applyEvents,
  ConversationView,
  emptyTranscript,
  type ConversationMessage,
  type EventEnvelope,
} from "../../../protocol";
import type { Route } from "../router";

/** A conversation is a session's messages as a script reads them; its id is the session id (`conversation_id` in the SSE stream). */
export const conversationRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/conversations/:id",
    doc: {
      summary: "A conversation's messages (user, assistant, tool) with their status",
      tags: ["chat"],
      response: ConversationView,
    },
    handler: async ({ services, params }): Promise<ConversationView> => {
      const session = await services.sessions.get(params.id);
      const events = await services.log.read(session.id, 0);
      return {
        id: session.id,
        session_id: session.id,
        title: session.title,
        workspace: session.workspace.path,
        messages: conversationMessages(events),
      };
    },
  },
];

/** The transcript reducer's items as messages; the last answer of a turn cut short takes the turn's outcome (cancelled, error, …) as status. */
export function conversationMessages(events: readonly EventEnvelope[]): ConversationMessage[] {
  const outcomes = new Map<string, string>();
  for (const event of events)
    if (event.type === "turn.completed") outcomes.set(event.payload.turnId, event.payload.outcome);
  const transcript = applyEvents(emptyTranscript(), events);
  // The last answer of a turn that ended otherwise than completed is the one cut short.
  const lastAnswer = new Map<string, string>();
  for (const item of transcript.items) if (item.kind === "assistant") lastAnswer.set(item.turnId, item.id);
  const messages: ConversationMessage[] = [];
  for (const item of transcript.items) {
    if (item.kind === "user") {
      messages.push({ id: item.id, task_id: item.turnId, role: "user", content: item.text, status: "completed" });
    } else if (item.kind === "assistant") {
      const outcome = outcomes.get(item.turnId);
      const cut = outcome !== undefined && outcome !== "completed" && lastAnswer.get(item.turnId) === item.id;
      const status = cut ? outcome : item.done || outcome !== undefined ? "completed" : "streaming";
      messages.push({
        id: item.id,
        task_id: item.turnId,
        role: "assistant",
        content: item.text,
        ...(item.reasoning ? { reasoning: item.reasoning } : {}),
        status,
      });
    } else if (item.kind === "tool") {
      messages.push({
        id: item.id,
        task_id: item.turnId,
        role: "tool",
        tool: item.name,
        args: item.args,
        content: item.output ?? "",
        status: item.state,
      });
    }
  }
  return messages;
}
