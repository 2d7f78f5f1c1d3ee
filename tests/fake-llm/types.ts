/** A tool call the fake model should make; `arguments` objects are sent JSON-encoded. */
export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  /** OpenAI-style cache report; computed from the fake's prefix cache when a script leaves it out. */
  prompt_tokens_details?: { cached_tokens: number };
  /** DeepSeek-style cache report, passed through as scripted. */
  prompt_cache_hit_tokens?: number;
  prompt_cache_miss_tokens?: number;
}

/** A normal assistant turn: reasoning, then text, then tool calls. */
export interface ScriptedCompletion {
  text?: string;
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: ScriptedUsage;
  /** Characters per content/reasoning/arguments delta (default 4). */
  chunkSize?: number;
  /** Delay between chunks (default 0). */
  delayMs?: number;
  firstChunkDelayMs?: number;
  /** Default "tool_calls" when toolCalls, else "stop". */
  finishReason?: string;
}

/** An HTTP error such as `{ status: 429, headers: { "retry-after": "1" } }`. */
export interface ScriptedError {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Streams `afterText`, then destroys the socket mid-stream (no [DONE]). */
export interface ScriptedCut {
  cut: true;
  afterText?: string;
}

/** A 200 stream without any choice content, just [DONE]. */
export interface ScriptedEmpty {
  empty: true;
}

/** Never answers, until the client goes away or the server closes. */
export interface ScriptedHang {
  hang: true;
}

export type ScriptedResponse = ScriptedCompletion | ScriptedError | ScriptedCut | ScriptedEmpty | ScriptedHang;

export interface RecordedRequest {
  // Parsed request bodies are whatever the client sent; tests inspect them loosely.
  body: any;
  headers: Record<string, string | string[] | undefined>;
  at: number;
}

export interface FakeLlm {
  /** Base URL including /v1, e.g. http://127.0.0.1:12345/v1 */
  url: string;
  port: number;
  /** Every chat completion request received, in order. */
  requests: RecordedRequest[];
  /** Appends to a FIFO queue consumed one response per chat completion request. */
  script(...responses: ScriptedResponse[]): void;
  /**
   * Requests marked `X-Worldline-Purpose: title` (the bridge naming a session): kept apart from
   * `requests` and answered from their own queue (`scriptTitle`), else with the prompt's first
   * words in title case, so turns' scripts and request counts never see them.
   */
  titleRequests: RecordedRequest[];
  scriptTitle(...responses: ScriptedResponse[]): void;
  /** Optional dynamic responder, consulted before the queue; `undefined` falls through. */
  onRequest?: (req: RecordedRequest) => ScriptedResponse | undefined;
  /** Strict mode (default on): two consecutive messages with the same user/assistant/system role get a 400, as strict chat templates do. */
  strict: boolean;
  /** Clears the queue, the recorded requests, the prefix cache and the tool-call id counter. */
  reset(): void;
  /** Forgets the prompts the prefix cache holds (each holds a whole history), as a server evicting them would. */
  clearCache(): void;
  close(): Promise<void>;
}
