import * as z from "zod";

/** Bodies, queries and answers of the IDE's file and settings API (server/files, server/settings). */

export const FileTreeQuery = z.object({
  dir: z.string().max(4096).default(""),
  /** "1": list what git ignores too (marked `ignored`); `.git` stays hidden. */
  ignored: z.enum(["0", "1"]).default("0"),
});
export const FileQuery = z.object({ path: z.string().min(1).max(4096) });
export const FileSearchQuery = z.object({
  q: z.string().max(200).default(""),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const WriteFileBody = z
  .object({
    path: z.string().min(1).max(4096),
    content: z.string(),
    /** The hash the editor loaded; null for a new file. Omitted: write unconditionally. */
    baseHash: z.string().max(64).nullable().optional(),
    force: z.boolean().optional(),
  })
  .strict();
export type WriteFileBody = z.infer<typeof WriteFileBody>;

export const TreeEntry = z.object({
  name: z.string(),
  path: z.string(),
  type: z.enum(["file", "dir"]),
  ignored: z.boolean().optional(),
});
export type TreeEntry = z.infer<typeof TreeEntry>;
export const FileTreeListing = z.object({ path: z.string(), entries: z.array(TreeEntry), truncated: z.boolean() });
export type FileTreeListing = z.infer<typeof FileTreeListing>;

export const FileContent = z.object({
  path: z.string(),
  content: z.string(),
  hash: z.string(),
  mtimeMs: z.number(),
  size: z.number(),
  binary: z.boolean(),
});
export type FileContent = z.infer<typeof FileContent>;

export const GitMarker = z.enum(["M", "A", "D", "U", "R", "C"]);
export type GitMarker = z.infer<typeof GitMarker>;
export const GitStatus = z.object({ repo: z.boolean(), markers: z.record(z.string(), GitMarker) });
export type GitStatus = z.infer<typeof GitStatus>;

/** Socket message bridge → tab: something changed under a folder this tab lists. */
export const FilesChanged = z.object({ sessionId: z.string(), paths: z.array(z.string()) });
export type FilesChanged = z.infer<typeof FilesChanged>;

export const ProviderKind = z.enum([
  "openai",
  "moonshot",
  "deepseek",
  "openrouter",
  "ollama",
  "vllm",
  "llamacpp",
  "openai_compatible",
]);
export type ProviderKind = z.infer<typeof ProviderKind>;

export const ModelCapabilities = z.object({ tools: z.boolean(), images: z.boolean(), thinking: z.boolean() });
export type ModelCapabilities = z.infer<typeof ModelCapabilities>;

export const ModelEntry = z.object({
  id: z.string().min(1).max(200),
  contextWindow: z.number().int().positive().max(10_000_000),
  capabilities: ModelCapabilities,
});
export type ModelEntry = z.infer<typeof ModelEntry>;

/** USD per million tokens: input, cached input and output (server/agent/pricing.ts has the defaults). */
export const ModelPrice = z.object({
  input: z.number().min(0).max(10_000),
  cached_input: z.number().min(0).max(10_000),
  output: z.number().min(0).max(10_000),
});
export type ModelPrice = z.infer<typeof ModelPrice>;

/** Prices by model id: the user's own (editable) and the built-in defaults they override. */
export const PricesView = z.object({
  prices: z.record(z.string(), ModelPrice),
  defaults: z.record(z.string(), ModelPrice),
});
export type PricesView = z.infer<typeof PricesView>;

export const SavePricesBody = z.object({ prices: z.record(z.string().min(1).max(200), ModelPrice) }).strict();

/**
 * How a provider takes what Worldline sends (server/agent/provider-quirks.ts); absent = the default for its
 * kind: `reasoningHistory` drop (DeepSeek refuses reasoning_content in input) or tool_calls for Moonshot
 * (Kimi's thinking models need it on tool-call turns); `promptCacheKey` on (dropped after a refusal).
 */
export const ProviderOptions = z.object({
  reasoningHistory: z.enum(["drop", "tool_calls", "all"]).optional(),
  promptCacheKey: z.boolean().optional(),
});
export type ProviderOptions = z.infer<typeof ProviderOptions>;

/**
 * Where the provider's last response (on this bridge) put its reasoning and its prompt-cache reads
 * (server/agent/provider/): e.g. `think_tags` for a local server that inlines `<think>` in content.
 */
export const ResponseForms = z.object({
  reasoning: z.enum(["reasoning_content", "reasoning", "content_parts", "think_tags", "none"]),
  cache: z.enum(["cached_tokens", "usage_cached_tokens", "prompt_cache_hit_tokens", "cache_read_input_tokens", "none"]),
  at: z.string(),
});
export type ResponseForms = z.infer<typeof ResponseForms>;

/** A provider as the browser sees it: the key only as a hint ("sk-…a1b2"). */
export const ProviderView = z.object({
  id: z.string(),
  kind: ProviderKind,
  name: z.string(),
  baseURL: z.string(),
  models: z.array(ModelEntry),
  options: ProviderOptions.optional(),
  hasKey: z.boolean(),
  keyHint: z.string().nullable(),
  /** Null until the provider answered a request on this bridge. */
  detected: ResponseForms.nullable().optional(),
});
export type ProviderView = z.infer<typeof ProviderView>;

export const DefaultModel = z.object({ providerId: z.string(), model: z.string() });
export type DefaultModel = z.infer<typeof DefaultModel>;

export const SettingsView = z.object({
  providers: z.array(ProviderView),
  defaultModel: DefaultModel.nullable(),
  /** The model from the environment, which wins over the settings when set. */
  envModel: z.string().nullable(),
  /** What the environment's provider (OPENAI_BASE_URL) sent in its last response on this bridge. */
  envDetected: ResponseForms.nullable().optional(),
});
export type SettingsView = z.infer<typeof SettingsView>;

export const SaveProviderBody = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,40}$/)
      .optional(),
    kind: ProviderKind,
    name: z.string().min(1).max(100),
    baseURL: z.string().url().max(2000),
    models: z.array(ModelEntry).max(200).default([]),
    options: ProviderOptions.optional(),
    /** A new key; omitted keeps the stored one, "" removes it. */
    apiKey: z.string().max(1000).optional(),
  })
  .strict();
export type SaveProviderBody = z.infer<typeof SaveProviderBody>;

export const DefaultModelBody = DefaultModel.nullable();

export const TestConnectionBody = z
  .object({
    providerId: z.string().optional(),
    baseURL: z.string().url().optional(),
    apiKey: z.string().max(1000).optional(),
  })
  .strict();
export const TestConnectionResult = z.object({ ok: z.boolean(), models: z.array(z.string()), message: z.string() });
export type TestConnectionResult = z.infer<typeof TestConnectionResult>;

/** The IDE layout, per user: panel sizes and which panels are open. */
export const IdeLayout = z
  .object({
    treeWidth: z.number().min(0).max(2000),
    agentWidth: z.number().min(0).max(3000),
    bottomHeight: z.number().min(0).max(2000),
    treeOpen: z.boolean(),
    bottomOpen: z.boolean(),
    theme: z.enum(["dark", "light"]).optional(),
  })
  .strict();
export type IdeLayout = z.infer<typeof IdeLayout>;

/** Socket command tab → bridge: send me `files.changed` for this session's workspace (until unwatch or disconnect). */
export const FilesWatchCommand = z.object({ sessionId: z.string().min(1).max(64) }).strict();
