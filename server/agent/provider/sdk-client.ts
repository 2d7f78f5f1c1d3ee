import type { OpenAI as Client } from "openai";
import type { ModelConfig } from "../../config";
import { isAzureEndpoint } from "../../config/azure";
import { proxyEnv } from "../../config/proxy";
import { ProviderError } from "../provider";
import { httpFetch } from "./http-fetch";
import { statusError } from "./status-error";

/** Until the response's headers: a stuck provider becomes a retryable timeout instead of a hung turn. */
const REQUEST_TIMEOUT_MS = 10 * 60_000;

/** Where requests go when the configuration names no server. */
const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Headers every request of ours carries: we read the body as a stream whatever the SDK would ask for. */
const DEFAULT_HEADERS = { accept: "text/event-stream" };

type Sdk = typeof import("openai");

/** The SDK, and its two clients with our status errors (see `loadSdk`). */
interface Loaded {
  sdk: Sdk;
  /** Named as the SDK's own: its User-Agent is the client class's name (`OpenAI/JS 6.x`). */
  OpenAI: Sdk["OpenAI"];
  AzureOpenAI: Sdk["AzureOpenAI"];
}

let loading: Promise<Loaded> | undefined;

/**
 * The `openai` package, imported on first use and kept: start-up paths that never call a model do
 * not load it. Its clients build their status errors as ours (`makeStatusError`, the SDK's hook
 * for it): its own APIError keeps only the body's `error` field, and FastAPI-style servers put
 * their message in `detail`.
 */
function loadSdk(): Promise<Loaded> {
  loading ??= import("openai").then(
    (sdk) => ({
      sdk,
      OpenAI: class extends sdk.OpenAI {
        protected override makeStatusError(
          status: number,
          body: unknown,
          text: string | undefined,
          headers: Headers,
        ): never {
          throw statusError(status, body, text, headers);
        }
      },
      AzureOpenAI: class extends sdk.AzureOpenAI {
        protected override makeStatusError(
          status: number,
          body: unknown,
          text: string | undefined,
          headers: Headers,
        ): never {
          throw statusError(status, body, text, headers);
        }
      },
    }),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Starts loading the SDK now, overlapped with the rest of start-up (print mode calls a model at once). */
export function preloadOpenAI(): void {
  // Not awaited, and a failure is not lost: the first request imports again and reports it.
  loadSdk().catch(() => undefined);
}

/**
 * The SDK's client for one model configuration: Azure's (`api-key`, `api-version`, the deployment
 * in the path) for an Azure endpoint, OpenAI's otherwise. The SDK never retries (server/agent/retry.ts
 * does) and takes nothing from the environment itself: the key, the URL and the API version come
 * from the validated configuration, the proxies from server/config/proxy.ts.
 */
export async function createClient(config: ModelConfig): Promise<Client> {
  const { OpenAI, AzureOpenAI } = await loadSdk();
  const baseURL = (config.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const options = {
    apiKey: config.apiKey,
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: REQUEST_TIMEOUT_MS,
    defaultHeaders: DEFAULT_HEADERS,
    fetch: httpFetch(proxyEnv()),
  };
  if (!isAzureEndpoint(baseURL)) return new OpenAI({ ...options, baseURL });
  if (!config.apiVersion) {
    throw new ProviderError(
      `${baseURL} is an Azure OpenAI endpoint, which needs an API version: set OPENAI_API_VERSION (e.g. 2024-10-21).`,
      undefined,
      false,
      undefined,
      { kind: "invalid_env" },
    );
  }
  // The resource's address alone means its deployments API, under /openai.
  const azureURL = new URL(baseURL).pathname === "/" ? `${baseURL}/openai` : baseURL;
  return new AzureOpenAI({ ...options, baseURL: azureURL, apiVersion: config.apiVersion });
}

/** An error the SDK threw, as ours: a timeout or an unreachable server is worth a retry, as before. */
export async function sdkErrorOf(error: unknown): Promise<unknown> {
  const { sdk } = await loadSdk();
  if (error instanceof sdk.APIConnectionTimeoutError) {
    return new ProviderError("The model provider timed out.", undefined, true, undefined, {
      cause: error,
      kind: "timeout",
    });
  }
  if (error instanceof sdk.APIUserAbortError) return error;
  if (error instanceof sdk.APIConnectionError) {
    const cause = error.cause instanceof Error ? error.cause : error;
    return new ProviderError(`Cannot reach the model provider: ${cause.message}`, undefined, true, undefined, {
      cause: error,
      kind: "connection",
    });
  }
  if (error instanceof sdk.APIError && error.status !== undefined) {
    const body = error.error === undefined ? undefined : { error: error.error };
    return statusError(error.status, body, undefined, error.headers ?? new Headers());
  }
  // Anything else the SDK refuses (a client it cannot build) is a configuration error: asking again changes nothing.
  if (error instanceof sdk.OpenAIError) {
    return new ProviderError(error.message, undefined, false, undefined, { cause: error, kind: "failed" });
  }
  return error;
}
