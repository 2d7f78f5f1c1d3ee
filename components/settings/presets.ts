import type { ProviderKind } from "@/server/protocol";

/** Form defaults per provider kind (the bridge has the same list in server/settings/presets.ts). */
export const KIND_DEFAULTS: Record<ProviderKind, { name: string; baseURL: string; keyHint: string }> = {
  openai: { name: "OpenAI", baseURL: "https://api.openai.com/v1", keyHint: "sk-…" },
  moonshot: { name: "Moonshot (Kimi)", baseURL: "https://api.moonshot.ai/v1", keyHint: "sk-…" },
  deepseek: { name: "DeepSeek", baseURL: "https://api.deepseek.com/v1", keyHint: "sk-…" },
  openrouter: { name: "OpenRouter", baseURL: "https://openrouter.ai/api/v1", keyHint: "sk-or-…" },
  ollama: { name: "Ollama", baseURL: "http://127.0.0.1:11434/v1", keyHint: "not needed" },
  vllm: { name: "vLLM", baseURL: "http://127.0.0.1:8000/v1", keyHint: "optional" },
  llamacpp: { name: "llama.cpp", baseURL: "http://127.0.0.1:8080/v1", keyHint: "optional" },
  openai_compatible: { name: "OpenAI-compatible", baseURL: "http://127.0.0.1:8000/v1", keyHint: "optional" },
};
