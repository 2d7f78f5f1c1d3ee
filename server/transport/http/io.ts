import type { IncomingMessage, ServerResponse } from "node:http";
import { WorldlineError } from "../../errors";
import { toWireError } from "../errors";
import { assertWellFormed } from "../unicode";

/** Request bodies above this are refused: prompts and edits fit easily, floods don't. */
export const MAX_BODY_BYTES = 1024 * 1024;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(json),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(json);
}

export function sendError(res: ServerResponse, error: unknown): void {
  const { status, error: wire, retryAfter } = toWireError(error);
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, status, { error: wire }, retryAfter === undefined ? {} : { "retry-after": String(retryAfter) });
}

/** Reads a JSON body: application/json only, size-limited, parsed or a clear 4xx. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json") {
    throw new WorldlineError(
      "request:unsupported_media_type",
      "Send the body as JSON with Content-Type: application/json.",
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new WorldlineError("request:too_large", `The body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text.trim()) throw new WorldlineError("request:invalid_json", "The request body is empty; send a JSON object.");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new WorldlineError("request:invalid_json", "The request body is not valid JSON.");
  }
  assertWellFormed(body);
  return body;
}
