import type { ChatProvider, ChatRequest, ProviderChunk } from "../../server/agent/provider";

/** One scripted model answer: text, tool calls, or raw chunks for anything else. */
export type ScriptedAnswer =
  { text: string } | { toolCalls: { name: string; arguments: unknown }[] } | { chunks: ProviderChunk[] };

/**
 * An in-process model for loop unit tests (after openai-agents-js's ScriptedModel): each request
 * gets the next scripted answer, and every request is kept, so a test checks both what the turn
 * did and what the model was sent. A request past the script fails the test loudly.
 */
export class ScriptedModel implements ChatProvider {
  readonly requests: ChatRequest[] = [];
  private readonly answers: ScriptedAnswer[];

  constructor(...answers: ScriptedAnswer[]) {
    this.answers = answers;
  }

  async *stream(request: ChatRequest): AsyncIterable<ProviderChunk> {
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    const answer = this.answers.shift();
    if (!answer) throw new Error(`ScriptedModel: request ${this.requests.length} has no scripted answer`);
    yield* chunksOf(answer, this.requests.length);
  }
}

function chunksOf(answer: ScriptedAnswer, requestNumber: number): ProviderChunk[] {
  if ("chunks" in answer) return answer.chunks;
  if ("text" in answer) {
    return [
      { type: "text", delta: answer.text },
      { type: "usage", inputTokens: 10, outputTokens: 5 },
      { type: "finish", reason: "stop" },
    ];
  }
  return [
    ...answer.toolCalls.map((call, index): ProviderChunk => ({
      type: "tool_call",
      index,
      id: `call_${requestNumber}_${index}`,
      name: call.name,
      argsDelta: JSON.stringify(call.arguments),
    })),
    { type: "usage", inputTokens: 10, outputTokens: 5 },
    { type: "finish", reason: "tool_calls" },
  ];
}
