import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Server as TcpServer } from "node:net";
import { RateLimitError } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../../../server/agent/openai-provider";
import { ProviderError, type ChatRequest } from "../../../server/agent/provider";
import { sdkErrorOf } from "../../../server/agent/provider/sdk-client";
import { StatusError } from "../../../server/agent/provider/status-error";

const STREAM =
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "hello" } }] })}\n\n` +
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`;

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingMessage["headers"];
}

const closers: (() => Promise<void>)[] = [];
const savedEnv = { ...process.env };
afterEach(async () => {
  for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
  Object.assign(process.env, savedEnv);
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function listen(server: Server | TcpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** A real model server answering every request with `answer` (a stream by default); what it saw. */
async function modelServer(answer: (res: ServerResponse) => void = streamAnswer) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers });
      answer(res);
    });
  });
  server.keepAliveTimeout = 100;
  return { port: await listen(server), seen };
}

function streamAnswer(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(STREAM);
}

/** A forward proxy: counts the absolute-URL requests it gets and passes them on to `upstreamPort`. */
async function forwardProxy(upstreamPort: number) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers });
    const target = new URL(req.url ?? "/");
    const upstream = httpRequest(
      {
        host: "127.0.0.1",
        port: upstreamPort,
        path: target.pathname + target.search,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  server.on("connect", (req: IncomingMessage, socket) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers });
    socket.end("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n");
  });
  return { port: await listen(server), seen };
}

function request(extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "m", messages: [{ role: "user", content: "hi" }], signal: new AbortController().signal, ...extra };
}

async function drain(stream: AsyncIterable<unknown>): Promise<unknown[]> {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

async function failure(stream: AsyncIterable<unknown>): Promise<unknown> {
  try {
    await drain(stream);
  } catch (error) {
    return error;
  }
  throw new Error("the stream did not fail");
}

describe("the provider through the openai package", () => {
  it("calls an Azure endpoint's deployment with api-key and api-version", async () => {
    // The resource's name resolves nowhere: the request reaches the fake server through HTTP_PROXY.
    const model = await modelServer();
    const proxy = await forwardProxy(model.port);
    process.env.HTTP_PROXY = `http://127.0.0.1:${proxy.port}`;
    const provider = createOpenAIProvider({
      baseURL: "http://res.openai.azure.com",
      apiKey: "azure-key",
      apiVersion: "2024-10-21",
      model: "gpt-4o",
    });
    expect(await drain(provider.stream(request({ model: "gpt-4o" })))).toContainEqual({ type: "text", delta: "hello" });
    expect(proxy.seen.map((seen) => seen.url)).toEqual([
      "http://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
    ]);
    const [seen] = model.seen;
    expect(seen.headers["api-key"]).toBe("azure-key");
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers["user-agent"]).toMatch(/^AzureOpenAI\/JS /);
    expect(seen.headers.host).toBe("res.openai.azure.com");
  });

  it("refuses an Azure endpoint without an API version at once, not retryably", async () => {
    const provider = createOpenAIProvider({ baseURL: "https://res.openai.azure.com", apiKey: "k", model: "m" });
    const error = await failure(provider.stream(request()));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ retryable: false, code: "provider:invalid_env" });
    expect((error as Error).message).toMatch(/OPENAI_API_VERSION/);
  });

  it("sends the client's default headers and nothing the SDK would take from the environment", async () => {
    process.env.OPENAI_ORG_ID = "org-from-env";
    process.env.OPENAI_PROJECT_ID = "proj-from-env";
    const model = await modelServer();
    const provider = createOpenAIProvider({ baseURL: `http://127.0.0.1:${model.port}/v1`, apiKey: "sk", model: "m" });
    await drain(provider.stream(request()));
    const [seen] = model.seen;
    expect(seen).toMatchObject({ method: "POST", url: "/v1/chat/completions" });
    expect(seen.headers.accept).toBe("text/event-stream");
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(seen.headers["user-agent"]).toMatch(/^OpenAI\/JS /);
    expect(seen.headers["x-stainless-retry-count"]).toBe("0");
    expect(seen.headers["openai-organization"]).toBeUndefined();
    expect(seen.headers["openai-project"]).toBeUndefined();
    expect(seen.headers["x-worldline-purpose"]).toBeUndefined();
  });

  it("sends http requests through HTTP_PROXY as absolute URLs, except to hosts NO_PROXY names", async () => {
    const model = await modelServer();
    const proxy = await forwardProxy(model.port);
    process.env.HTTP_PROXY = `http://127.0.0.1:${proxy.port}`;
    const baseURL = `http://127.0.0.1:${model.port}/v1`;
    await drain(createOpenAIProvider({ baseURL, apiKey: "k", model: "m" }).stream(request({ purpose: "title" })));
    expect(proxy.seen).toHaveLength(1);
    expect(proxy.seen[0]).toMatchObject({ method: "POST", url: `${baseURL}/chat/completions` });
    expect(proxy.seen[0].headers["x-worldline-purpose"]).toBe("title");
    process.env.NO_PROXY = "localhost,127.0.0.1";
    await drain(createOpenAIProvider({ baseURL, apiKey: "k", model: "m" }).stream(request()));
    expect(proxy.seen).toHaveLength(1);
    expect(model.seen).toHaveLength(2);
  });

  it("tunnels https requests through HTTPS_PROXY with CONNECT; the proxy refusing the tunnel is its retryable 502", async () => {
    const proxy = await forwardProxy(0);
    process.env.HTTPS_PROXY = `http://127.0.0.1:${proxy.port}`;
    const provider = createOpenAIProvider({ baseURL: "https://api.example.test/v1", apiKey: "k", model: "m" });
    const error = await failure(provider.stream(request()));
    expect(proxy.seen).toEqual([expect.objectContaining({ method: "CONNECT", url: "api.example.test:443" })]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 502, retryable: true, code: "provider:unavailable" });
    expect((error as Error).message).toBe("HTTP 502: status 502 with no body");
  });

  it("maps a 503 with an HTTP-date Retry-After to a retryable status error", async () => {
    const model = await modelServer((res) => {
      res.writeHead(503, {
        "content-type": "application/json",
        "retry-after": new Date(Date.now() + 5_000).toUTCString(),
      });
      res.end(JSON.stringify({ error: { message: "overloaded" } }));
    });
    const provider = createOpenAIProvider({ baseURL: `http://127.0.0.1:${model.port}/v1`, apiKey: "k", model: "m" });
    const error = await failure(provider.stream(request()));
    expect(error).toBeInstanceOf(StatusError);
    expect(error).toMatchObject({ status: 503, retryable: true, code: "provider:unavailable" });
    expect((error as Error).message).toBe("HTTP 503: overloaded");
    // One attempt only: server/agent/retry.ts retries, the SDK does not.
    expect(model.seen).toHaveLength(1);
    const retryAfterMs = (error as StatusError).retryAfterMs ?? 0;
    expect(retryAfterMs).toBeGreaterThan(3_000);
    expect(retryAfterMs).toBeLessThanOrEqual(5_000);
  });

  it("maps the SDK's own APIError to ours, with its status and Retry-After", async () => {
    const sdkError = new RateLimitError(429, { message: "slow down" }, undefined, new Headers({ "retry-after": "2" }));
    const error = await sdkErrorOf(sdkError);
    expect(error).toBeInstanceOf(StatusError);
    expect(error).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 2000,
      code: "provider:rate_limited",
      message: "HTTP 429: slow down",
    });
  });

  it("ends a stream mid-body when the turn's signal aborts", async () => {
    const held: ServerResponse[] = [];
    const model = await modelServer((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "hel" } }] })}\n\n`);
      held.push(res);
    });
    closers.push(async () => held.forEach((res) => res.destroy()));
    const controller = new AbortController();
    const provider = createOpenAIProvider({ baseURL: `http://127.0.0.1:${model.port}/v1`, apiKey: "k", model: "m" });
    const chunks: unknown[] = [];
    const ended = (async () => {
      for await (const chunk of provider.stream(request({ signal: controller.signal }))) {
        chunks.push(chunk);
        controller.abort();
      }
    })();
    const error = await ended.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(chunks).toEqual([{ type: "text", delta: "hel" }]);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ProviderError);
    expect(controller.signal.aborted).toBe(true);
  });
});
