// A real HTTP server that replays recorded provider streams (tests/fixtures/providers/) byte for byte,
// one scripted response per conversation request, so the corpus tests drive the real bridge and its
// real provider layer against what providers actually sent.
import fs from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export const CORPUS_DIR = path.resolve(import.meta.dirname, "../fixtures/providers");

export interface CorpusExpectation {
  text: string;
  reasoning: string;
  refusal: string;
  tool_calls: { id: string | null; name: string; arguments: Record<string, unknown> }[];
  finish_reason: string | null;
  stop: "completed" | "truncated" | "refused" | "content_filter" | "error" | "broken";
  error: string | null;
  usage: { input: number; cached: number | null; output: number; reasoning: number | null } | null;
}

export interface CorpusStream {
  id: string;
  provider: string;
  source: { repository: string; path: string; commit: string; url: string; interaction?: number };
  framing: "chunks-lines" | "recorded-sse";
  kinds: string[];
  expect: CorpusExpectation;
}

export function loadCorpus(): CorpusStream[] {
  const file = JSON.parse(fs.readFileSync(path.join(CORPUS_DIR, "corpus.json"), "utf8")) as { streams: CorpusStream[] };
  return file.streams;
}

export function streamBody(id: string, dir = "streams"): string {
  return fs.readFileSync(path.join(CORPUS_DIR, dir, `${id}.sse`), "utf8");
}

/** One scripted answer: a recorded SSE body (optionally cut after `cutAfter` bytes), or an HTTP error. */
export type Replay =
  { body: string; cutAfter?: number } | { status: number; json: unknown; headers?: Record<string, string> };

export interface ReplayLlm {
  url: string;
  /** Conversation requests (those without X-Worldline-Purpose), in order. */
  requests: { body: { messages: unknown } & Record<string, unknown> }[];
  script(...replies: Replay[]): void;
  /** Served to any request once the script is used up, and to side requests (titles, memory). */
  fallback: Replay;
  reset(): void;
  close(): Promise<void>;
}

export async function startReplayLlm(fallback: Replay): Promise<ReplayLlm> {
  const queue: Replay[] = [];
  const requests: ReplayLlm["requests"] = [];
  const server = createServer((req, res) => void handle(req, res));
  const llm: ReplayLlm = {
    url: "",
    requests,
    fallback,
    script: (...replies) => void queue.push(...replies),
    reset() {
      queue.length = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    let raw = "";
    for await (const piece of req) raw += String(piece);
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    const side = Boolean(req.headers["x-worldline-purpose"]);
    if (!side) requests.push({ body: JSON.parse(raw) as ReplayLlm["requests"][number]["body"] });
    const reply = (!side && queue.shift()) || llm.fallback;
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(JSON.stringify(reply.json));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (reply.cutAfter === undefined) {
      res.end(reply.body);
      return;
    }
    // A connection that breaks mid-stream: the bytes so far, then a reset.
    res.write(Buffer.from(reply.body).subarray(0, reply.cutAfter), () => res.destroy());
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  llm.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return llm;
}
