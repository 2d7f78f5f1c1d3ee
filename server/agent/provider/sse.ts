/** One Server-Sent Event: its `event:` name (when given) and its joined `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Splits a response body into SSE events (the WHATWG rules that matter here: blank line ends an
 * event, `data:` lines join with "\n", `:` lines are comments such as OpenRouter's keep-alives).
 * Yields `{ data: "[DONE]" }` like any other event; the reader decides what it means.
 */
export async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event: string | undefined;
  let data: string[] = [];
  const flush = function* (): Generator<SseEvent> {
    if (data.length) yield { ...(event ? { event } : {}), data: data.join("\n") };
    event = undefined;
    data = [];
  };
  const line = function* (text: string): Generator<SseEvent> {
    if (text === "") return yield* flush();
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    // llama.cpp-family servers send a mid-stream error as its own field (`error: {...}`), not as data.
    else if (field === "error") {
      event = "error";
      data.push(value);
    }
  };
  for await (const piece of body) {
    buffer += decoder.decode(piece, { stream: true });
    let end: number;
    while ((end = buffer.search(/\r\n|\r|\n/)) !== -1) {
      const text = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
      yield* line(text);
    }
  }
  buffer += decoder.decode();
  if (buffer) yield* line(buffer);
  yield* flush();
}
