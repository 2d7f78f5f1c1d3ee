import { applyEvents, ConversationView, emptyTranscript, type ConversationMessage, type EventEnvelope } from "../../../protocol";
import type { Route } from "../router";

/** A conversation is a session's messages as a script reads them; its id is the session id (`conversation_id` in the SSE stream). */
export const conversationRoutes: Route[] = [
  {
    method: "GET",
    path: "/api/v1/conversations/:id",
    doc: { summary: "A conversation's messages (user, assistant, tool) with their status", tags: ["chat"], response: ConversationView },
    handler: async ({ services, params }): Promise<ConversationView> => {
      const session = await services.sessions.get(params.id);
      const events = await services.log.read(session.id, 0);
      return { id: session.id, session_id: session.id, title: session.title, workspace: session.workspace.path, messages: conversationMessages(events) };
    },
  },
];

/** The transcript reducer's items as messages; an unfinished answer takes its turn's outcome (cancelled, error, …) as status. */
export function conversationMessages(events: readonly EventEnvelope[]): ConversationMessage[] {
  const outcomes = new Map<string, string>();
  for (const event of events) if (event.type === "turn.completed") outcomes.set(event.payload.turnId, event.payload.outcome);
  const transcript = applyEvents(emptyTranscript(), events);
  const messages: ConversationMessage[] = [];
  for (const item of transcript.items) {
    if (item.kind === "user") {
      messages.push({ id: item.id, task_id: item.turnId, role: "user", content: item.text, status: "completed" });
    } else if (item.kind === "assistant") {
      const outcome = outcomes.get(item.turnId);
      const status = item.done ? "completed" : outcome === undefined ? "streaming" : outcome === "completed" ? "completed" : outcome;
      messages.push({ id: item.id, task_id: item.turnId, role: "assistant", content: item.text, ...(item.reasoning ? { reasoning: item.reasoning } : {}), status });
    } else if (item.kind === "tool") {
      messages.push({ id: item.id, task_id: item.turnId, role: "tool", tool: item.name, args: item.args, content: item.output ?? "", status: item.state });
    }
  }
  return messages;
}
