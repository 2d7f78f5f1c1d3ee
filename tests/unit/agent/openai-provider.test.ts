import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../../../server/agent/openai-provider";
import { ProviderError, type ChatRequest } from "../../../server/agent/provider";

/** A real HTTP server answering each request with `answer`; the requests it saw, with their bodies. */
async function serve(answer: (req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse) => void) {
  const seen: { headers: IncomingMessage["headers"]; body: Record<string, unknown> }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (part: Buffer) => (raw += part.toString()));
    req.on("end", () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      seen.push({ headers: req.headers, body });
      answer(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`, seen };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function request(extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    signal: new AbortController().signal,
    ...extra,
  };
}

async function failure(stream: AsyncIterable<unknown>): Promise<ProviderError> {
  try {
    for await (const _chunk of stream) {
      // drained
    }
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error("the stream did not fail");
}

function sse(res: ServerResponse, chunks: unknown[]): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  res.end("data: [DONE]\n\n");
}

const TEXT_CHUNK = { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "hello" } }] };
const STOP_CHUNK = {
  id: "c",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
};

describe("the OpenAI-compatible provider over fetch", () => {
  it("posts to <base>/chat/completions with the key, the purpose header and a streamed body", async () => {
    const server = await serve((_req, _body, res) => sse(res, [TEXT_CHUNK, STOP_CHUNK]));
    const provider = createOpenAIProvider({ baseURL: server.url, apiKey: "sk-test", model: "m" });
    const chunks = [];
    for await (const chunk of provider.stream(request({ purpose: "title", cacheKey: "s1" }))) chunks.push(chunk);
    expect(chunks).toContainEqual({ type: "text", delta: "hello" });
    const [seen] = server.seen;
    expect(seen.headers.authorization).toBe("Bearer sk-test");
    expect(seen.headers["x-worldline-purpose"]).toBe("title");
    expect(seen.body).toMatchObject({ model: "m", stream: true, stream_options: { include_usage: true } });
    expect(seen.body.prompt_cache_key).toBe("s1");
  });

  it("keeps the connection for the next step, and a body that never ends after [DONE] does not hold the step", async () => {
    const connections = new Set<unknown>();
    let endless = false;
    const server = await serve((req, _body, res) => {
      connections.add(req.socket);
      if (!endless) return sse(res, [TEXT_CHUNK, STOP_CHUNK]);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(TEXT_CHUNK)}\n\ndata: ${JSON.stringify(STOP_CHUNK)}\n\ndata: [DONE]\n\n`);
      // …and the body never ends.
    });
    const provider = createOpenAIProvider({ baseURL: server.url, apiKey: "k", model: "m" });
    const drain = async () => {
      const chunks = [];
      for await (const chunk of provider.stream(request())) chunks.push(chunk);
      return chunks;
    };
    for (let i = 0; i < 3; i++) await drain();
    expect(server.seen).toHaveLength(3);
    expect(connections.size).toBe(1);
    endless = true;
    expect(await drain()).toContainEqual({ type: "text", delta: "hello" });
  });

  it("reads the provider's own message from the usual error bodies", async () => {
    const bodies = [
      [JSON.stringify({ error: { message: "model not found", type: "invalid_request_error" } }), "model not found"],
      [JSON.stringify({ detail: "Input validation error" }), "Input validation error"],
      [JSON.stringify({ error: "bad key" }), "bad key"],
      ["<html>Bad Gateway</html>", "<html>Bad Gateway</html>"],
    ];
    let index = 0;
    const server = await serve((_req, _body, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(bodies[index++][0]);
    });
    const provider = createOpenAIProvider({ baseURL: server.url, apiKey: "k", model: "m" });
    for (const [, expected] of bodies) {
      const error = await failure(provider.stream(request()));
      expect(error.message).toBe(`HTTP 400: ${expected}`);
      expect(error.retryable).toBe(false);
      expect(error.code).toBe("provider:failed");
    }
  });

  it("marks 429 retryable with its Retry-After, and 401 as an auth failure", async () => {
    let status = 429;
    const server = await serve((_req, _body, res) => {
      res.writeHead(status, { "content-type": "application/json", "retry-after": "2" });
      res.end(JSON.stringify({ error: { message: "slow down" } }));
    });
    const provider = createOpenAIProvider({ baseURL: server.url, apiKey: "k", model: "m" });
    const limited = await failure(provider.stream(request()));
    expect(limited).toMatchObject({ status: 429, retryable: true, retryAfterMs: 2000, code: "provider:rate_limited" });
    status = 401;
    const denied = await failure(provider.stream(request()));
    expect(denied).toMatchObject({ status: 401, retryable: false, code: "provider:auth" });
  });

  it("says why a server cannot be reached, retryably", async () => {
    const server = await serve(() => undefined);
    const url = server.url;
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const provider = createOpenAIProvider({ baseURL: url, apiKey: "k", model: "m" });
    const error = await failure(provider.stream(request()));
    expect(error.message).toMatch(/^Cannot reach the model provider: .*ECONNREFUSED/);
    expect(error).toMatchObject({ retryable: true, code: "provider:connection" });
  });

  it("drops prompt_cache_key for good once the server refuses the field", async () => {
    const server = await serve((_req, body, res) => {
      if ("prompt_cache_key" in body) {
        res.writeHead(400, { "content-type": "application/json" });
        return res.end(
          JSON.stringify({ error: { message: "Unrecognized request argument supplied: prompt_cache_key" } }),
        );
      }
      sse(res, [TEXT_CHUNK, STOP_CHUNK]);
    });
    const provider = createOpenAIProvider({ baseURL: server.url, apiKey: "k", model: "m" });
    for (let i = 0; i < 2; i++) {
      for await (const _chunk of provider.stream(request({ cacheKey: "s1" }))) {
        // drained
      }
    }
    expect(server.seen.map((seen) => "prompt_cache_key" in seen.body)).toEqual([true, false, false]);
  });
});
