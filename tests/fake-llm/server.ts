// A scripted fake LLM: a real HTTP server speaking the OpenAI Chat Completions API,
// so tests drive the real bridge by pointing OPENAI_BASE_URL at it (README.md, Tests).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { FakeLlm, RecordedRequest, ScriptedCompletion, ScriptedResponse } from "./types.ts";
import {
  completionChunks,
  completionObject,
  errorBody,
  estimateTokens,
  lastUserText,
  textDeltaChunks,
  type Chunk,
  type ResponseContext,
} from "./wire.ts";

export type {
  FakeLlm,
  RecordedRequest,
  ScriptedCompletion,
  ScriptedCut,
  ScriptedEmpty,
  ScriptedError,
  ScriptedHang,
  ScriptedResponse,
  ScriptedToolCall,
  ScriptedUsage,
} from "./types.ts";

const DEFAULT_MODELS = ["fake-model"];
const DEFAULT_MODEL = "fake-model";

export interface FakeLlmOptions {
  port?: number;
  host?: string;
  models?: string[];
  /**
   * Refuse consecutive same-role messages with a 400, like Gemma 3's template in vLLM or llama.cpp `--jinja`
   * ("Conversation roles must alternate"). On by default: every suite talks to a strict model.
   */
  strict?: boolean;
  /** Top-level request fields this server refuses with a 400, like servers that reject unknown fields. */
  rejectFields?: string[];
}

export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const host = options.host ?? "127.0.0.1";
  const models = options.models ?? DEFAULT_MODELS;
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const titleQueue: ScriptedResponse[] = [];
  const titleRequests: RecordedRequest[] = [];
  let toolCallCount = 0;
  let responseCount = 0;
  const cache = new PrefixCache();

  const fake: FakeLlm = {
    url: "",
    port: 0,
    requests,
    script: (...responses) => {
      queue.push(...responses);
    },
    titleRequests,
    scriptTitle: (...responses) => {
      titleQueue.push(...responses);
    },
    onRequest: undefined,
    strict: options.strict ?? true,
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      titleQueue.length = 0;
      titleRequests.length = 0;
      toolCallCount = 0;
      cache.clear();
    },
    clearCache: () => cache.clear(),
    close: () => closeServer(),
  };

  function nextResponse(recorded: RecordedRequest): ScriptedResponse {
    return fake.onRequest?.(recorded) ?? queue.shift() ?? { text: `Echo: ${lastUserText(recorded.body?.messages)}` };
  }

  function contextFor(body: RecordedRequest["body"]): ResponseContext {
    responseCount += 1;
    const promptTokens = estimateTokens(JSON.stringify(body?.messages ?? []).length);
    return {
      id: `chatcmpl-fake-${responseCount}`,
      created: Math.floor(Date.now() / 1000),
      model: typeof body?.model === "string" ? body.model : DEFAULT_MODEL,
      promptTokens,
      cachedTokens: Math.min(promptTokens, cache.lookup(body)),
      nextToolCallId: () => `call_${++toolCallCount}`,
    };
  }

  async function handleCompletion(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const parsed = parseJson(raw);
    const recorded: RecordedRequest = {
      body: parsed.ok ? parsed.value : raw,
      headers: { ...req.headers },
      at: Date.now(),
    };
    const naming = req.headers["x-worldline-purpose"] === "title";
    (naming ? titleRequests : requests).push(recorded);
    if (!parsed.ok) return sendJson(res, 400, errorBody(400, "Request body is not valid JSON"));
    const refused = (options.rejectFields ?? []).find((field) => recorded.body && field in recorded.body);
    if (refused) return sendJson(res, 400, errorBody(400, `Unrecognized request argument supplied: ${refused}`));
    const broken = fake.strict ? sameRoleTwice(recorded.body?.messages) : undefined;
    if (broken !== undefined) {
      const message = `Conversation roles must alternate user/assistant/user/assistant/... (messages ${broken - 1} and ${broken} are both "${recorded.body.messages[broken].role}")`;
      return sendJson(res, 400, errorBody(400, message));
    }

    const response = naming
      ? (titleQueue.shift() ?? { text: titleOf(recorded.body?.messages) })
      : nextResponse(recorded);
    const ctx = contextFor(recorded.body);
    const streaming = recorded.body?.stream === true;
    if ("hang" in response) return waitForClose(res);
    if ("status" in response) return sendError(res, response.status, response.body, response.headers);
    if ("cut" in response) return cut(res, ctx, response.afterText ?? "", streaming);
    if ("empty" in response) {
      if (streaming) return writeStream(res, [], {});
      return sendJson(res, 200, { ...completionObject({}, ctx), choices: [] });
    }
    if (!streaming) {
      if (response.firstChunkDelayMs) await delay(response.firstChunkDelayMs);
      return sendJson(res, 200, completionObject(response, ctx));
    }
    return writeStream(res, completionChunks(response, ctx), response);
  }

  async function handleAdmin(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === "GET" && path === "/__admin/requests") return sendJson(res, 200, requests);
    if (req.method === "POST" && path === "/__admin/reset") {
      fake.reset();
      return sendJson(res, 200, { ok: true });
    }
    if (req.method === "POST" && path === "/__admin/title") {
      const parsed = parseJson(await readBody(req));
      if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null)
        return sendJson(res, 400, errorBody(400, "Expected one scripted response"));
      titleQueue.push(parsed.value as ScriptedResponse);
      return sendJson(res, 200, { queued: titleQueue.length });
    }
    if (req.method === "GET" && path === "/__admin/title-requests") return sendJson(res, 200, titleRequests);
    if (req.method === "POST" && path === "/__admin/script") {
      const parsed = parseJson(await readBody(req));
      const responses: unknown =
        parsed.ok && !Array.isArray(parsed.value) ? [parsed.value] : parsed.ok ? parsed.value : null;
      if (!Array.isArray(responses) || !responses.every((r) => typeof r === "object" && r !== null)) {
        return sendJson(res, 400, errorBody(400, "Expected a JSON array of scripted responses"));
      }
      queue.push(...(responses as ScriptedResponse[]));
      return sendJson(res, 200, { queued: queue.length });
    }
    sendJson(res, 404, errorBody(404, `Unknown admin route ${req.method} ${path}`));
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://fake-llm").pathname.replace(/\/+$/, "");
    if (path.startsWith("/__admin/")) return handleAdmin(path, req, res);
    // Also accept paths without /v1, for clients configured with a bare host as base URL.
    const apiPath = path.startsWith("/v1/") ? path.slice(3) : path;
    if (req.method === "POST" && apiPath === "/chat/completions") return handleCompletion(req, res);
    if (req.method === "GET" && apiPath === "/models") {
      return sendJson(res, 200, { object: "list", data: models.map(modelEntry) });
    }
    const model = /^\/models\/(.+)$/.exec(apiPath);
    if (req.method === "GET" && model && models.includes(decodeURIComponent(model[1]))) {
      return sendJson(res, 200, modelEntry(decodeURIComponent(model[1])));
    }
    sendJson(res, 404, errorBody(404, `Unknown route ${req.method} ${path}`));
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (!res.headersSent) return sendJson(res, 500, errorBody(500, String(error)));
      res.destroy();
    });
  });

  let closing: Promise<void> | undefined;
  function closeServer(): Promise<void> {
    closing ??= new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      // Hanging and keep-alive connections would otherwise hold close() open forever.
      server.closeAllConnections();
    });
    return closing;
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  fake.port = port;
  fake.url = `http://${urlHost(host)}:${port}/v1`;
  return fake;
}

/** The index of the second of two consecutive messages with the same user/assistant/system role, if any. */
function sameRoleTwice(messages: unknown): number | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (let i = 1; i < messages.length; i++) {
    const role = (messages[i] as { role?: unknown })?.role;
    if ((role === "user" || role === "assistant" || role === "system") && role === messages[i - 1]?.role) return i;
  }
  return undefined;
}

/**
 * What a caching server keeps of the prompts it was sent: a request's tool list and messages, serialized in
 * order. A new request reuses the longest prefix it shares with any earlier one whose tools are the same
 * (tools come first in every chat template), counted at ~4 characters a token.
 */
class PrefixCache {
  private readonly entries: { tools: string; messages: string }[] = [];

  lookup(body: RecordedRequest["body"]): number {
    const tools = JSON.stringify(body?.tools ?? null);
    const messages = JSON.stringify(body?.messages ?? []);
    let best = 0;
    // Newest first: the previous request of the same session usually shares the most, and an
    // entry too short to beat the best so far is not compared at all.
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i];
      if (entry.tools !== tools || Math.min(entry.messages.length, messages.length) <= best) continue;
      best = Math.max(best, commonPrefix(entry.messages, messages, best));
    }
    this.entries.push({ tools, messages });
    // Like a real cache, it forgets the oldest prompts; a session's requests stay well inside this.
    if (this.entries.length > PREFIX_CACHE_ENTRIES) this.entries.shift();
    return Math.floor(best / 4);
  }

  clear(): void {
    this.entries.length = 0;
  }
}

const PREFIX_CACHE_ENTRIES = 64;

/**
 * Length of the longest common prefix of `a` and `b`, or 0 if it is not longer than `atLeast`.
 * Native `startsWith` comparisons (whole-prefix checks first, then a binary search): the fake
 * runs inside the bridge's process in benchmarks, and a loop over characters (64 cached prompts
 * of a long session, each tens of KB) cost more per request than the bridge's own step.
 */
function commonPrefix(a: string, b: string, atLeast: number): number {
  if (!a.startsWith(b.slice(0, atLeast + 1))) return 0;
  if (b.startsWith(a)) return a.length;
  if (a.startsWith(b)) return b.length;
  let low = atLeast + 1; // a prefix of this length is shared
  let high = Math.min(a.length, b.length); // no longer prefix can be
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (a.startsWith(b.slice(low, mid), low)) low = mid;
    else high = mid - 1;
  }
  return low;
}

function modelEntry(id: string): Record<string, unknown> {
  return { id, object: "model", created: 0, owned_by: "fake-llm" };
}

function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString("utf8");
}

function parseJson(raw: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: raw === "" ? {} : JSON.parse(raw) };
  } catch {
    // Invalid JSON is answered with a 400, like the real API.
    return { ok: false };
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  // A string body is sent verbatim, to imitate proxies that answer with HTML or plain text.
  if (typeof body === "string") {
    res.writeHead(status, { "content-type": "text/plain", ...headers });
    return void res.end(body);
  }
  sendJson(res, status, body ?? errorBody(status), headers);
}

function sse(data: Chunk | string): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  // Headers go out at once, as with the real API; only the tokens are slow.
  res.flushHeaders();
}

async function writeStream(
  res: ServerResponse,
  chunks: Chunk[],
  timing: Pick<ScriptedCompletion, "delayMs" | "firstChunkDelayMs">,
): Promise<void> {
  let gone = false;
  res.once("close", () => (gone = true));
  startStream(res);
  for (const [i, item] of chunks.entries()) {
    const wait = i === 0 ? timing.firstChunkDelayMs : timing.delayMs;
    if (wait) await delay(wait);
    if (gone) return;
    res.write(sse(item));
  }
  res.end(sse("[DONE]"));
}

async function cut(res: ServerResponse, ctx: ResponseContext, text: string, streaming: boolean): Promise<void> {
  let partial: string;
  if (streaming) {
    startStream(res);
    partial = textDeltaChunks(ctx, text).map(sse).join("");
  } else {
    res.writeHead(200, { "content-type": "application/json" });
    const json = JSON.stringify(completionObject({ text }, ctx));
    partial = json.slice(0, Math.floor(json.length / 2));
  }
  // Wait until the partial data is handed to the socket, or destroy() could drop it.
  await new Promise<void>((resolve) => res.write(partial, () => resolve()));
  res.socket?.destroy();
}

function waitForClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => res.once("close", () => resolve()));
}

/** The default answer to a title request: the message's first words in title case. */
function titleOf(messages: unknown): string {
  const words = lastUserText(messages).split(/\s+/).filter(Boolean).slice(0, 4);
  return words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join(" ") || "Untitled";
}
