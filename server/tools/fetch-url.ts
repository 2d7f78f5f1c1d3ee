import * as z from "zod";
import { errorMessage } from "../errors";
import { defineTool } from "./define";
import type { ToolResult } from "./types";

/** Bytes read from a response at most; the rest is not downloaded. */
export const FETCH_MAX_BYTES = 2 * 1024 * 1024;
/** Default and maximum time for one fetch. */
export const FETCH_DEFAULT_TIMEOUT_MS = 30_000;
export const FETCH_MAX_TIMEOUT_MS = 120_000;
/** Characters of extracted text returned; pages are long and mostly navigation. */
export const FETCH_MAX_TEXT_CHARS = 40_000;

const TEXTUAL =
  /^(text\/|application\/(json|xml|xhtml\+xml|javascript|x-javascript|ld\+json|rss\+xml|atom\+xml)|image\/svg\+xml)/i;

const FetchUrlParameters = z.object({
  url: z.string().url().describe("The http(s) URL to fetch."),
  raw: z.boolean().optional().describe("Return the raw body instead of readable text extracted from HTML."),
  timeout_seconds: z
    .number()
    .positive()
    .max(FETCH_MAX_TIMEOUT_MS / 1000)
    .optional()
    .describe(`Give up after this many seconds (default ${FETCH_DEFAULT_TIMEOUT_MS / 1000}).`),
});

export const fetchUrlTool = defineTool({
  name: "fetch_url",
  description:
    "Fetch a web page or file over HTTP(S) and return its text (HTML is converted to readable text with links kept). Use it for documentation, issues and APIs. Large responses are cut.",
  parameters: FetchUrlParameters,
  timeoutMs: FETCH_MAX_TIMEOUT_MS + 5_000,
  needsApproval(args) {
    // Fetching can send data out (in the URL); scope "allow for this session" to the origin.
    const url = new URL(args.url);
    return {
      level: "ask",
      subject: args.url,
      scope: `${url.origin}/*`,
      description: `Fetch ${args.url}`,
      risk: "low",
      actionType: "network",
    };
  },
  async execute(args, ctx) {
    const url = new URL(args.url);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return { isError: true, output: `Only http and https URLs can be fetched, not ${url.protocol}` };
    }
    const timeoutMs = (args.timeout_seconds ?? FETCH_DEFAULT_TIMEOUT_MS / 1000) * 1000;
    // One controller for cancel and timeout; AbortSignal.any/timeout in Node 20 can miss a body that stalls.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException("timed out", "TimeoutError")), timeoutMs);
    const onAbort = () => controller.abort(new DOMException("cancelled", "AbortError"));
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    try {
      return await fetchText(url, args, controller.signal, timeoutMs);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
  },
});

async function fetchText(
  url: URL,
  args: { url: string; raw?: boolean },
  signal: AbortSignal,
  timeoutMs: number,
): Promise<ToolResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      signal,
      redirect: "follow",
      headers: {
        "user-agent": "Worldline/0.1 (coding agent)",
        accept: "text/html,text/plain,application/json;q=0.9,*/*;q=0.5",
      },
    });
  } catch (error) {
    return { isError: true, output: fetchFailure(error, timeoutMs, args.url) };
  }
  const type = response.headers.get("content-type") ?? "";
  if (type && !TEXTUAL.test(type)) {
    await response.body?.cancel().catch(() => undefined); // the body is not read either way
    return {
      isError: true,
      output: `${args.url} returned ${type} (status ${response.status}); fetch_url only returns text.`,
    };
  }
  let body: { bytes: Uint8Array; cut: boolean };
  try {
    body = await readCapped(response, FETCH_MAX_BYTES, signal);
  } catch (error) {
    return { isError: true, output: fetchFailure(error, timeoutMs, args.url) };
  }
  const decoded = new TextDecoder(charsetOf(type)).decode(body.bytes);
  const isHtml = /html/i.test(type) || (!type && /^\s*<(!doctype html|html)/i.test(decoded));
  // The converter (~70 ms to load) is loaded by the first page that needs it, not at start-up.
  let text = isHtml && !args.raw ? (await import("./html-text")).htmlToText(decoded) : decoded;
  const notes: string[] = [];
  if (body.cut) notes.push(`[response cut at ${FETCH_MAX_BYTES} bytes]`);
  if (text.length > FETCH_MAX_TEXT_CHARS) {
    notes.push(`[output truncated: ${text.length - FETCH_MAX_TEXT_CHARS} more characters]`);
    text = text.slice(0, FETCH_MAX_TEXT_CHARS);
  }
  const header = `${response.url || args.url} — HTTP ${response.status}${type ? ` (${type.split(";")[0]})` : ""}`;
  return { isError: !response.ok, output: [header, "", text, ...notes].join("\n") };
}

async function readCapped(
  response: Response,
  max: number,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), cut: false };
  const reader = response.body.getReader();
  const aborted = new Promise<never>((_, reject) => {
    const fail = () => {
      reader.cancel().catch(() => undefined); // aborting: the rejection below is what counts
      reject(signal.reason);
    };
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
  aborted.catch(() => undefined); // raced below; unhandled only when the read finished first
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await Promise.race([reader.read(), aborted]);
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size >= max) {
      await reader.cancel().catch(() => undefined); // enough read: the rest is dropped
      const all = Buffer.concat(chunks);
      return { bytes: all.subarray(0, max), cut: true };
    }
  }
  return { bytes: Buffer.concat(chunks), cut: false };
}

function charsetOf(contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1]?.toLowerCase() ?? "utf-8";
  try {
    new TextDecoder(charset);
    return charset;
  } catch {
    // a charset TextDecoder does not know: read as UTF-8
    return "utf-8";
  }
}

function fetchFailure(error: unknown, timeoutMs: number, url: string): string {
  const name = (error as { name?: string })?.name;
  if (name === "TimeoutError") return `Fetching ${url} timed out after ${timeoutMs / 1000}s.`;
  if (name === "AbortError") return `Fetching ${url} was cancelled.`;
  const cause = (error as { cause?: unknown })?.cause;
  return `Fetching ${url} failed: ${errorMessage(error)}${cause ? ` (${errorMessage(cause)})` : ""}`;
}
