import type { ModelEntry, ProviderKind } from "../protocol";

/** Where each kind of provider usually lives, so the form starts filled in. */
export const PROVIDER_PRESETS: Record<
  ProviderKind,
  { name: string; baseURL: string; needsKey: boolean; models: ModelEntry[] }
> = {
  openai: {
    name: "OpenAI",
    baseURL: "https://api.openai.com/v1",
    needsKey: true,
    models: [{ id: "gpt-4.1", contextWindow: 1_047_576, capabilities: { tools: true, images: true, thinking: false } }],
  },
  moonshot: {
    name: "Moonshot (Kimi)",
    baseURL: "https://api.moonshot.ai/v1",
    needsKey: true,
    models: [
      {
        id: "kimi-k2-0905-preview",
        contextWindow: 262_144,
        capabilities: { tools: true, images: false, thinking: false },
      },
    ],
  },
  deepseek: {
    name: "DeepSeek",
    baseURL: "https://api.deepseek.com/v1",
    needsKey: true,
    models: [
      { id: "deepseek-chat", contextWindow: 131_072, capabilities: { tools: true, images: false, thinking: false } },
      { id: "deepseek-reasoner", contextWindow: 131_072, capabilities: { tools: true, images: false, thinking: true } },
    ],
  },
  openrouter: { name: "OpenRouter", baseURL: "https://openrouter.ai/api/v1", needsKey: true, models: [] },
  ollama: { name: "Ollama", baseURL: "http://127.0.0.1:11434/v1", needsKey: false, models: [] },
  vllm: { name: "vLLM", baseURL: "http://127.0.0.1:8000/v1", needsKey: false, models: [] },
  llamacpp: { name: "llama.cpp", baseURL: "http://127.0.0.1:8080/v1", needsKey: false, models: [] },
  openai_compatible: { name: "OpenAI-compatible", baseURL: "http://127.0.0.1:8000/v1", needsKey: false, models: [] },
};
