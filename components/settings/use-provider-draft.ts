"use client";

import { useReducer } from "react";
import type { ModelEntry, ProviderKind, ProviderView } from "@/server/protocol";
import { KIND_DEFAULTS } from "./presets";

export const EMPTY_MODEL: ModelEntry = {
  id: "",
  contextWindow: 128_000,
  capabilities: { tools: true, images: false, thinking: false },
};

/** What the provider form edits; the key is write-only (empty keeps the stored one). */
export interface ProviderDraft {
  kind: ProviderKind;
  name: string;
  baseURL: string;
  apiKey: string;
  reasoningHistory: "" | "drop" | "tool_calls" | "all";
  promptCacheKey: boolean;
  models: ModelEntry[];
}

export type DraftEdit =
  | { kind: ProviderKind }
  | Partial<Pick<ProviderDraft, "name" | "baseURL" | "apiKey" | "reasoningHistory" | "promptCacheKey">>
  | { model: number; patch: Partial<ModelEntry> }
  | { removeModel: number }
  | { addModel: string };

function draftOf(initial?: ProviderView): ProviderDraft {
  return {
    kind: initial?.kind ?? "openai",
    name: initial?.name ?? KIND_DEFAULTS.openai.name,
    baseURL: initial?.baseURL ?? KIND_DEFAULTS.openai.baseURL,
    apiKey: "",
    reasoningHistory: initial?.options?.reasoningHistory ?? "",
    promptCacheKey: initial?.options?.promptCacheKey ?? true,
    models: initial?.models.length ? initial.models : [EMPTY_MODEL],
  };
}

function applyEdit(draft: ProviderDraft, edit: DraftEdit): ProviderDraft {
  // A new kind brings its name and URL with it.
  if ("kind" in edit) {
    const { name, baseURL } = KIND_DEFAULTS[edit.kind];
    return { ...draft, kind: edit.kind, name, baseURL };
  }
  if ("model" in edit)
    return { ...draft, models: draft.models.map((m, i) => (i === edit.model ? { ...m, ...edit.patch } : m)) };
  if ("removeModel" in edit) return { ...draft, models: draft.models.filter((_, i) => i !== edit.removeModel) };
  if ("addModel" in edit) {
    // A served model picked from the test's list replaces the empty rows; "+ Add model" adds one.
    const kept = edit.addModel ? draft.models.filter((m) => m.id) : draft.models;
    return { ...draft, models: [...kept, { ...EMPTY_MODEL, id: edit.addModel }] };
  }
  return { ...draft, ...edit };
}

/** The draft and its one way to change, starting from the provider being edited (or a new one). */
export function useProviderDraft(initial?: ProviderView) {
  return useReducer(applyEdit, initial, draftOf);
}

/** The body `POST /api/v1/settings/providers` takes for this draft. */
export function providerBody(draft: ProviderDraft, id: string | undefined) {
  return {
    id,
    kind: draft.kind,
    name: draft.name,
    baseURL: draft.baseURL,
    models: draft.models.filter((m) => m.id.trim()),
    options: {
      ...(draft.reasoningHistory ? { reasoningHistory: draft.reasoningHistory } : {}),
      promptCacheKey: draft.promptCacheKey,
    },
    ...(draft.apiKey ? { apiKey: draft.apiKey } : {}),
  };
}
