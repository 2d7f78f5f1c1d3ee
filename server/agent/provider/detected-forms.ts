import type { ResponseForms } from "../provider";

/**
 * The reasoning and cache forms each provider (by base URL) used in its last response, for the
 * Settings page to show: a user sees at a glance that their local server's `<think>` blocks are read
 * as reasoning. In memory: it describes this bridge's last response, not a setting (in team mode each
 * bridge shows what its own turns saw).
 */
const lastForms = new Map<string, ResponseForms>();

const keyOf = (baseURL: string | undefined) => (baseURL ?? "").replace(/\/+$/, "");

export function recordDetectedForms(baseURL: string | undefined, forms: ResponseForms): void {
  lastForms.set(keyOf(baseURL), forms);
}

/** `baseURL` undefined: the SDK's default (OpenAI's), as for an environment without OPENAI_BASE_URL. */
export function detectedFormsFor(baseURL: string | undefined): ResponseForms | null {
  return lastForms.get(keyOf(baseURL)) ?? null;
}
