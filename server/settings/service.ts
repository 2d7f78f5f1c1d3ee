import {
  DefaultModel,
  IdeLayout,
  ModelEntry,
  ModelPrice,
  ProviderKind,
  ProviderOptions,
  type SaveProviderBody,
  type SettingsView,
  type TestConnectionResult,
} from "../protocol";
import * as z from "zod";
import { WorldlineError } from "../errors";
import * as store from "../store";
import { KeyFile, keyHint } from "./keys";

const PROVIDERS_KEY = "providers";
const DEFAULT_MODEL_KEY = "defaultModel";
const LAYOUT_KEY = "ide.layout";
const PRICES_KEY = "model.prices";
/** A provider that doesn't answer /models in this time is reported as unreachable. */
export const TEST_CONNECTION_TIMEOUT_MS = 8_000;

const StoredProvider = z.object({
  id: z.string(),
  kind: ProviderKind,
  name: z.string(),
  baseURL: z.string(),
  models: z.array(ModelEntry),
  options: ProviderOptions.optional(),
});
type StoredProvider = z.infer<typeof StoredProvider>;

/** What the agent runtime needs to call the default model from the settings. */
export interface ResolvedModel {
  baseURL: string;
  apiKey: string;
  model: string;
  contextWindow: number;
  capabilities: { tools: boolean; images: boolean; thinking: boolean };
  reasoningHistory?: ProviderOptions["reasoningHistory"];
  promptCacheKey?: boolean;
}

/**
 * Providers, models and the default model (in the Setting table), API keys (in a
 * 0600 file), and the per-user IDE layout.
 */
export class SettingsService {
  private readonly keys: KeyFile;

  constructor(
    private readonly db: store.Db,
    home: string,
    private readonly envModel: string | null = null,
  ) {
    this.keys = new KeyFile(home);
  }

  async view(): Promise<SettingsView> {
    const [providers, keys, defaultModel] = await Promise.all([this.providers(), this.keys.all(), this.defaultModel()]);
    return {
      providers: providers.map((provider) => ({
        ...provider,
        hasKey: Boolean(keys[provider.id]),
        keyHint: keyHint(keys[provider.id]),
      })),
      defaultModel,
      envModel: this.envModel,
    };
  }

  async saveProvider(body: SaveProviderBody): Promise<SettingsView> {
    const providers = await this.providers();
    const id = body.id ?? uniqueId(body.kind, providers);
    const entry: StoredProvider = {
      id,
      kind: body.kind,
      name: body.name,
      baseURL: body.baseURL.replace(/\/+$/, ""),
      models: body.models,
      ...(body.options ? { options: body.options } : {}),
    };
    const index = providers.findIndex((provider) => provider.id === id);
    if (index === -1) providers.push(entry);
    else providers[index] = entry;
    await store.putSetting(this.db, PROVIDERS_KEY, providers);
    if (body.apiKey !== undefined) await this.keys.set(id, body.apiKey || null);
    return this.view();
  }

  async removeProvider(id: string): Promise<SettingsView> {
    const providers = await this.providers();
    if (!providers.some((provider) => provider.id === id))
      throw new WorldlineError("settings:not_found", `No provider "${id}".`);
    await store.putSetting(
      this.db,
      PROVIDERS_KEY,
      providers.filter((provider) => provider.id !== id),
    );
    await this.keys.set(id, null);
    if ((await this.defaultModel())?.providerId === id) await store.putSetting(this.db, DEFAULT_MODEL_KEY, null);
    return this.view();
  }

  async setDefaultModel(choice: DefaultModel | null): Promise<SettingsView> {
    if (choice) {
      const provider = (await this.providers()).find((p) => p.id === choice.providerId);
      if (!provider) throw new WorldlineError("settings:invalid", `No provider "${choice.providerId}".`);
    }
    await store.putSetting(this.db, DEFAULT_MODEL_KEY, choice);
    return this.view();
  }

  /** The default model with its provider's URL and key, or null when none is set. */
  async resolveDefaultModel(): Promise<ResolvedModel | null> {
    const choice = await this.defaultModel();
    if (!choice) return null;
    const provider = (await this.providers()).find((p) => p.id === choice.providerId);
    if (!provider) return null;
    const model = provider.models.find((m) => m.id === choice.model);
    return {
      baseURL: provider.baseURL,
      // Local servers (Ollama, vLLM, llama.cpp) take any key; the client library insists on one.
      apiKey: (await this.keys.get(provider.id)) ?? "not-needed",
      model: choice.model,
      contextWindow: model?.contextWindow ?? 128_000,
      capabilities: model?.capabilities ?? { tools: true, images: false, thinking: false },
      reasoningHistory: provider.options?.reasoningHistory ?? (provider.kind === "moonshot" ? "tool_calls" : undefined),
      promptCacheKey: provider.options?.promptCacheKey,
    };
  }

  /** Asks the provider's /models: reachable, key accepted, and which models it serves. */
  async testConnection(input: {
    providerId?: string;
    baseURL?: string;
    apiKey?: string;
  }): Promise<TestConnectionResult> {
    const provider = input.providerId ? (await this.providers()).find((p) => p.id === input.providerId) : undefined;
    const baseURL = input.baseURL ?? provider?.baseURL;
    if (!baseURL) throw new WorldlineError("settings:invalid", "Give a provider or a base URL to test.");
    // A stored key goes only to the provider's stored URL: testing another URL needs its key in the request,
    // so the form can never be used to send a saved key somewhere else.
    const trimmed = (url: string) => url.replace(/\/+$/, "");
    const storedUrl = provider && trimmed(baseURL) === trimmed(provider.baseURL);
    const apiKey = input.apiKey || (provider && storedUrl ? await this.keys.get(provider.id) : undefined);
    try {
      const response = await fetch(`${baseURL.replace(/\/+$/, "")}/models`, {
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
        signal: AbortSignal.timeout(TEST_CONNECTION_TIMEOUT_MS),
      });
      if (!response.ok) {
        const hint = response.status === 401 || response.status === 403 ? " (check the API key)" : "";
        return { ok: false, models: [], message: `The provider answered ${response.status}${hint}.` };
      }
      // A body that is not JSON lists no models.
      const body = (await response.json().catch(() => ({}))) as { data?: { id?: unknown }[] };
      const models = (body.data ?? [])
        .map((m) => String(m.id ?? ""))
        .filter(Boolean)
        .slice(0, 500);
      return {
        ok: true,
        models,
        message: `Connected: ${models.length} model${models.length === 1 ? "" : "s"} available.`,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, models: [], message: `Cannot reach ${baseURL}: ${message}` };
    }
  }

  /** The user's prices per model id, over the built-in defaults (server/agent/pricing.ts). */
  async prices(): Promise<Record<string, ModelPrice>> {
    const parsed = z.record(z.string(), ModelPrice).safeParse(await store.getSetting(this.db, PRICES_KEY));
    return parsed.success ? parsed.data : {};
  }

  async savePrices(prices: Record<string, ModelPrice>): Promise<Record<string, ModelPrice>> {
    await store.putSetting(this.db, PRICES_KEY, prices);
    return prices;
  }

  async layout(): Promise<IdeLayout | null> {
    const parsed = IdeLayout.safeParse(await store.getSetting(this.db, LAYOUT_KEY));
    return parsed.success ? parsed.data : null;
  }

  async saveLayout(layout: IdeLayout): Promise<IdeLayout> {
    await store.putSetting(this.db, LAYOUT_KEY, layout);
    return layout;
  }

  private async providers(): Promise<StoredProvider[]> {
    const parsed = z.array(StoredProvider).safeParse(await store.getSetting(this.db, PROVIDERS_KEY));
    return parsed.success ? parsed.data : [];
  }

  private async defaultModel(): Promise<DefaultModel | null> {
    const parsed = DefaultModel.nullable().safeParse(await store.getSetting(this.db, DEFAULT_MODEL_KEY));
    return parsed.success ? parsed.data : null;
  }
}

function uniqueId(kind: string, providers: StoredProvider[]): string {
  const base = kind.replace(/_/g, "-");
  let id = base;
  for (let n = 2; providers.some((p) => p.id === id); n++) id = `${base}-${n}`;
  return id;
}
