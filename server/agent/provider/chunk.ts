import * as z from "zod";
import { ProviderError } from "../provider";

/**
 * The parts of a Chat Completions chunk the normalisers read, checked at the edge. Everything else a
 * provider adds (citations, x_groq, obfuscation, content_filter_results…) passes through unread.
 */
const ToolCallDelta = z.looseObject({
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  function: z.looseObject({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const ContentPart = z.looseObject({ type: z.string() });

export const ChunkDelta = z.looseObject({
  content: z.union([z.string(), z.array(ContentPart)]).nullish(),
  reasoning_content: z.string().nullish(),
  reasoning: z.string().nullish(),
  refusal: z.string().nullish(),
  tool_calls: z.array(ToolCallDelta).nullish(),
});
export type ChunkDelta = z.infer<typeof ChunkDelta>;
export type ToolCallDelta = z.infer<typeof ToolCallDelta>;

const Choice = z.looseObject({
  index: z.number().int().nonnegative().nullish(),
  delta: ChunkDelta.nullish(),
  finish_reason: z.string().nullish(),
});

export const RawUsage = z.looseObject({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  prompt_cache_hit_tokens: z.number().nullish(),
  /** Cached input at the top of `usage` (some OpenAI-compatible servers), not under `prompt_tokens_details`. */
  cached_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  prompt_tokens_details: z
    .looseObject({ cached_tokens: z.number().nullish(), cache_write_tokens: z.number().nullish() })
    .nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
});
export type RawUsage = z.infer<typeof RawUsage>;

const ErrorBody = z.union([
  z.string(),
  z.looseObject({
    message: z.string().nullish(),
    code: z.union([z.string(), z.number()]).nullish(),
    type: z.string().nullish(),
    status_code: z.number().nullish(),
  }),
]);
export type ErrorBody = z.infer<typeof ErrorBody>;

const Chunk = z.looseObject({
  choices: z.array(Choice).nullish(),
  usage: RawUsage.nullish(),
  error: ErrorBody.nullish(),
});
export type Chunk = z.infer<typeof Chunk>;

/** How much of a bad chunk an error message quotes. */
const QUOTE_CHARS = 200;

const quote = (text: string) => (text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text);

/** A protocol fault in a stream the server said was fine: the same request would get the same answer. */
function malformed(message: string): ProviderError {
  return new ProviderError(message, 200, false, undefined, { kind: "malformed_stream" });
}

/** One SSE `data:` payload as a chunk, or a clear error naming what was wrong with it. */
export function parseChunk(data: string): Chunk {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    throw malformed(`The provider sent a stream chunk that is not JSON: ${quote(data)}`);
  }
  const parsed = Chunk.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw malformed(
      `The provider sent a stream chunk of an unknown shape (${issue.path.join(".") || "chunk"}: ${issue.message}): ${quote(data)}`,
    );
  }
  const chunk = parsed.data;
  if (chunk.choices == null && chunk.usage == null && chunk.error == null) {
    throw malformed(
      `The provider sent a stream chunk of an unknown shape (no choices, usage or error): ${quote(data)}`,
    );
  }
  return chunk;
}

/** An error event's body: `{"error": {...}}`, a bare `{"message", "code"}`, or text. */
export function errorBodyOf(data: string): ErrorBody {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return data;
  }
  const wrapped = z.looseObject({ error: ErrorBody }).safeParse(json);
  if (wrapped.success) return wrapped.data.error;
  const bare = ErrorBody.safeParse(json);
  return bare.success ? bare.data : data;
}
