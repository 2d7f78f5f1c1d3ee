import os from "node:os";
import path from "node:path";
import * as z from "zod";
import { WorldlineError } from "../errors";
import { isAzureEndpoint } from "./azure";
import { proxyEnv } from "./proxy";

/** The environment contract (README.md, Configuration), validated once at start-up. */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4477),
  HOST: z.string().min(1).default("127.0.0.1"),
  WORLDLINE_HOME: z.string().min(1).optional(),
  WORLDLINE_TOKEN: z
    .string()
    .min(16, "WORLDLINE_TOKEN must be at least 16 characters")
    .regex(/^[A-Za-z0-9._~-]+$/, "WORLDLINE_TOKEN may only contain URL-safe characters")
    .optional(),
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_API_KEY: z.string().optional(),
  /** Azure OpenAI's `api-version` query parameter (the SDK's own variable name); needed when OPENAI_BASE_URL is an Azure endpoint. */
  OPENAI_API_VERSION: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/, "OPENAI_API_VERSION must be an Azure API version such as 2024-10-21")
    .optional(),
  WORLDLINE_MODEL: z.string().min(1).optional(),
  /** Context window of WORLDLINE_MODEL in tokens, when the provider doesn't say. */
  WORLDLINE_CONTEXT_WINDOW: z.coerce.number().int().positive().default(128_000),
  /** Allows HOST to be something other than loopback (SECURITY.md: any other HOST needs WORLDLINE_ALLOW_LAN=1 and the token, and warns). */
  WORLDLINE_ALLOW_LAN: z.enum(["0", "1"]).optional(),
  /** Extra Host names allowed (comma-separated), e.g. a LAN name. */
  WORLDLINE_ALLOWED_HOSTS: z.string().optional(),
  /** PostgreSQL instead of the SQLite file in WORLDLINE_HOME (team mode). */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must be a postgresql:// URL (unset, the database is SQLite)")
    .optional(),
  /** Fan-out across bridges (team mode): event-log notifications, socket.io rooms, forwarded work. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "REDIS_URL must be a redis:// or rediss:// URL")
    .optional(),
  /** Internal: the Redis key prefix of one deployment (tests give each run its own). */
  WORLDLINE_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]+$/)
    .default("worldline"),
  /** Named tokens, `name:token,…`; the name is what `decided_by` records. */
  WORLDLINE_TOKENS: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]+:[A-Za-z0-9._~-]{16,}(,[A-Za-z0-9_-]+:[A-Za-z0-9._~-]{16,})*$/,
      "WORLDLINE_TOKENS must be name:token,… (tokens of at least 16 URL-safe characters)",
    )
    .optional(),
  /** Sign-in with OpenID Connect on a hub (README, "Runners and people"): the provider's issuer URL, and this hub's client there. */
  WORLDLINE_OIDC_ISSUER: z.string().url().optional(),
  WORLDLINE_OIDC_CLIENT_ID: z.string().min(1).optional(),
  WORLDLINE_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** The role of a person the provider signs in for the first time (admins change it later). */
  WORLDLINE_OIDC_DEFAULT_ROLE: z.enum(["admin", "member", "viewer"]).default("viewer"),
  /** The hub's address as browsers reach it (https://ide.example.com), for the provider's redirect; default: from Host. */
  WORLDLINE_PUBLIC_URL: z.string().url().optional(),
  /** Overrides the provider default for `reasoning_content` in history (see ModelConfig). */
  WORLDLINE_REASONING_HISTORY: z.enum(["drop", "tool_calls", "all"]).optional(),
  /** Notices also POSTed as JSON to this URL (ntfy, a chat webhook). */
  WORLDLINE_NOTIFY_WEBHOOK: z.string().url().optional(),
  /** "1": the webhook's notices carry action tokens too. */
  WORLDLINE_NOTIFY_ACTIONS: z.enum(["0", "1"]).optional(),
  /** "0" never sends `prompt_cache_key`. */
  WORLDLINE_PROMPT_CACHE_KEY: z.enum(["0", "1"]).optional(),
  /** A turn with no model output and no running tool for this long is interrupted (server/agent/idle-watch.ts). */
  WORLDLINE_TURN_IDLE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(30 * 60_000),
  /** The deployment's spend limit per day, in USD (server/budgets). */
  WORLDLINE_DAILY_BUDGET_USD: z.coerce.number().finite().min(0).optional(),
  /** Folders of the hub's own machine where members may open sessions, separated by the path delimiter (`:`); none by default. */
  WORLDLINE_HUB_ROOTS: z
    .string()
    .refine(
      (value) => value.split(path.delimiter).every((entry) => entry === "" || path.isAbsolute(entry)),
      "WORLDLINE_HUB_ROOTS must list absolute folders, separated by " + path.delimiter,
    )
    .optional(),
  /** More variable names (comma-separated) that terminals, shell tools, MCP servers and external agents never get (server/secrets). */
  WORLDLINE_SCRUB_ENV: z
    .string()
    .regex(
      /^[A-Za-z_][A-Za-z0-9_]*(\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*,?$/,
      "WORLDLINE_SCRUB_ENV must be variable names, comma-separated",
    )
    .optional(),
});

export interface BridgeConfig {
  port: number;
  host: string;
  home: string;
  token?: string;
  allowLan: boolean;
  extraHosts: string[];
  model: ModelConfig | null;
  /** OPENAI_API_VERSION: Azure OpenAI's API version, also for a Settings provider at an Azure endpoint. */
  apiVersion?: string;
  contextWindow: number;
  /** postgresql://… when set; otherwise the database is SQLite under `home`. */
  databaseUrl?: string;
  /** redis://… when set: bridges sharing it (and the database) form one deployment. */
  redisUrl?: string;
  redisPrefix: string;
  /** Named tokens (WORLDLINE_TOKENS); WORLDLINE_TOKEN, when set, is also accepted as `default`. */
  tokens: { name: string; token: string }[];
  /** OpenID Connect sign-in (a hub with named people, server/people); null when not configured. */
  oidc: { issuer: string; clientId: string; clientSecret: string } | null;
  oidcDefaultRole: "admin" | "member" | "viewer";
  publicUrl?: string;
  turnIdleMs: number;
  dailyBudgetUsd: number | null;
  /** WORLDLINE_HUB_ROOTS: where members may open sessions on this machine (absolute, resolved). */
  hubRoots: string[];
  /** WORLDLINE_SCRUB_ENV: variable names scrubbed from children's environments besides the usual ones. */
  scrubEnv: string[];
  /** WORLDLINE_NOTIFY_WEBHOOK, with action tokens only when WORLDLINE_NOTIFY_ACTIONS=1. */
  notifyWebhook: { url: string; actions: boolean } | null;
}

export interface ModelConfig {
  baseURL?: string;
  apiKey: string;
  /** Azure OpenAI's `api-version` (server/agent/provider/sdk-client.ts tells an Azure endpoint by its host). */
  apiVersion?: string;
  model: string;
  /** Send `prompt_cache_key` (the session id); default on, dropped by itself where a server refuses it. */
  promptCacheKey?: boolean;
  /** Which `reasoning_content` goes back to the provider in history; default by provider (server/agent/provider-quirks.ts). */
  reasoningHistory?: ReasoningHistory;
}

/** `drop`: none (DeepSeek refuses it; Qwen-style templates drop it anyway); `tool_calls`: on tool-call turns (Kimi thinking models need it); `all`. */
export type ReasoningHistory = "drop" | "tool_calls" | "all";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "::1"]);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host);
}

/** Reads and validates the environment; throws a WorldlineError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): BridgeConfig {
  const parsed = EnvSchema.safeParse(stripEmpty(env));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    throw new WorldlineError("config:invalid_env", `Invalid environment: ${problems}`);
  }
  const e = parsed.data;
  const allowLan = e.WORLDLINE_ALLOW_LAN === "1";
  const oidcParts = [e.WORLDLINE_OIDC_ISSUER, e.WORLDLINE_OIDC_CLIENT_ID, e.WORLDLINE_OIDC_CLIENT_SECRET];
  if (oidcParts.some(Boolean) && !oidcParts.every(Boolean)) {
    throw new WorldlineError(
      "config:invalid_env",
      "Invalid environment: OpenID Connect needs all three of WORLDLINE_OIDC_ISSUER, WORLDLINE_OIDC_CLIENT_ID and WORLDLINE_OIDC_CLIENT_SECRET.",
    );
  }
  if (!isLoopbackHost(e.HOST) && !allowLan) {
    throw new WorldlineError(
      "config:invalid_env",
      `HOST=${e.HOST} is not loopback. Binding to other interfaces exposes the agent to your network; set WORLDLINE_ALLOW_LAN=1 to do it anyway.`,
    );
  }
  if (e.OPENAI_BASE_URL && isAzureEndpoint(e.OPENAI_BASE_URL) && !e.OPENAI_API_VERSION) {
    throw new WorldlineError(
      "config:invalid_env",
      `Invalid environment: OPENAI_BASE_URL=${e.OPENAI_BASE_URL} is an Azure OpenAI endpoint, which needs OPENAI_API_VERSION (e.g. 2024-10-21).`,
    );
  }
  proxyEnv(env);
  const home = path.resolve(e.WORLDLINE_HOME ?? path.join(os.homedir(), ".worldline"));
  return {
    port: e.PORT,
    host: e.HOST,
    home,
    token: e.WORLDLINE_TOKEN,
    allowLan,
    extraHosts: (e.WORLDLINE_ALLOWED_HOSTS ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean),
    model: e.WORLDLINE_MODEL
      ? {
          baseURL: e.OPENAI_BASE_URL,
          apiKey: e.OPENAI_API_KEY ?? "not-needed",
          apiVersion: e.OPENAI_API_VERSION,
          model: e.WORLDLINE_MODEL,
          reasoningHistory: e.WORLDLINE_REASONING_HISTORY,
          promptCacheKey: e.WORLDLINE_PROMPT_CACHE_KEY === undefined ? undefined : e.WORLDLINE_PROMPT_CACHE_KEY === "1",
        }
      : null,
    apiVersion: e.OPENAI_API_VERSION,
    contextWindow: e.WORLDLINE_CONTEXT_WINDOW,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisPrefix: e.WORLDLINE_REDIS_PREFIX,
    tokens: (e.WORLDLINE_TOKENS ?? "")
      .split(",")
      .filter(Boolean)
      .map((entry) => ({ name: entry.slice(0, entry.indexOf(":")), token: entry.slice(entry.indexOf(":") + 1) })),
    oidc:
      e.WORLDLINE_OIDC_ISSUER && e.WORLDLINE_OIDC_CLIENT_ID && e.WORLDLINE_OIDC_CLIENT_SECRET
        ? {
            issuer: e.WORLDLINE_OIDC_ISSUER,
            clientId: e.WORLDLINE_OIDC_CLIENT_ID,
            clientSecret: e.WORLDLINE_OIDC_CLIENT_SECRET,
          }
        : null,
    oidcDefaultRole: e.WORLDLINE_OIDC_DEFAULT_ROLE,
    publicUrl: e.WORLDLINE_PUBLIC_URL?.replace(/\/$/, ""),
    turnIdleMs: e.WORLDLINE_TURN_IDLE_MS,
    dailyBudgetUsd: e.WORLDLINE_DAILY_BUDGET_USD ?? null,
    hubRoots: hubRoots(e.WORLDLINE_HUB_ROOTS, home),
    scrubEnv: (e.WORLDLINE_SCRUB_ENV ?? "")
      .split(",")
      .map((name) => name.trim())
      .filter(Boolean),
    notifyWebhook: e.WORLDLINE_NOTIFY_WEBHOOK
      ? { url: e.WORLDLINE_NOTIFY_WEBHOOK, actions: e.WORLDLINE_NOTIFY_ACTIONS === "1" }
      : null,
  };
}

/** A hub root may neither be WORLDLINE_HOME, nor inside it, nor hold it: a member's session there would reach the hub's keys. */
function hubRoots(value: string | undefined, home: string): string[] {
  const roots = [
    ...new Set(
      (value ?? "")
        .split(path.delimiter)
        .filter(Boolean)
        .map((entry) => path.resolve(entry)),
    ),
  ];
  for (const root of roots) {
    const relation = path.relative(root, home);
    if (relation === "" || !relation.startsWith("..") || root.startsWith(home + path.sep))
      throw new WorldlineError(
        "config:invalid_env",
        `Invalid environment: WORLDLINE_HUB_ROOTS: ${root} holds or is inside WORLDLINE_HOME (${home}); name folders apart from it.`,
      );
  }
  return roots;
}

/** Empty variables count as unset, as shells often export `FOO=`. */
function stripEmpty(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => !!entry[1]));
}
