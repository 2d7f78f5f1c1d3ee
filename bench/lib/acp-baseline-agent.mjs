// The ACP bench's baseline: the least a Node ACP agent does before its first reply. The ACP SDK on
// stdio, `session/new` answered with a fresh id, and `session/prompt` streamed from the model
// (OPENAI_BASE_URL, as `worldline acp` is given): each SSE content delta is sent as an
// `agent_message_chunk`. No store, no tools, no history: what `worldline acp` adds is the rest.
import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const app = acp
  .agent({ name: "baseline" })
  .onRequest(acp.methods.agent.initialize, async () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {},
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, async () => ({ sessionId: randomUUID() }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const response = await fetch(`${process.env.OPENAI_BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
      body: JSON.stringify({
        model: process.env.WORLDLINE_MODEL,
        stream: true,
        messages: [{ role: "user", content: params.prompt.map((part) => part.text ?? "").join("") }],
      }),
    });
    let buffered = "";
    for await (const bytes of response.body) {
      buffered += Buffer.from(bytes).toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("data: ") || line === "data: [DONE]") continue;
        const text = JSON.parse(line.slice(6)).choices?.[0]?.delta?.content;
        if (text)
          await client.notify(acp.methods.client.session.update, {
            sessionId: params.sessionId,
            update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
          });
      }
    }
    return { stopReason: "end_turn" };
  });

await app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin))).closed;
