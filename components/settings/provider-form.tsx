"use client";

import { useState, type FormEvent } from "react";
import {
  type ModelEntry,
  type ProviderKind,
  type ProviderView,
  SettingsView,
  TestConnectionResult,
} from "@/server/protocol";
import { api } from "@/components/transport/client";
import { DetectedForms } from "./detected-forms";
import { KIND_DEFAULTS } from "./presets";

const EMPTY_MODEL: ModelEntry = {
  id: "",
  contextWindow: 128_000,
  capabilities: { tools: true, images: false, thinking: false },
};

/** Add or edit a provider: kind, URL, key (write-only), models with window and capabilities, test connection. */
export function ProviderForm({
  initial,
  onSaved,
  onCancel,
}: {
  initial?: ProviderView;
  onSaved: (view: SettingsView) => void;
  onCancel: () => void;
}) {
  const [kind, setKind] = useState<ProviderKind>(initial?.kind ?? "openai");
  const [name, setName] = useState(initial?.name ?? KIND_DEFAULTS.openai.name);
  const [baseURL, setBaseURL] = useState(initial?.baseURL ?? KIND_DEFAULTS.openai.baseURL);
  const [apiKey, setApiKey] = useState("");
  const [reasoningHistory, setReasoningHistory] = useState(initial?.options?.reasoningHistory ?? "");
  const [promptCacheKey, setPromptCacheKey] = useState(initial?.options?.promptCacheKey ?? true);
  const [models, setModels] = useState<ModelEntry[]>(initial?.models.length ? initial.models : [EMPTY_MODEL]);
  const [test, setTest] = useState<TestConnectionResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const pickKind = (next: ProviderKind) => {
    setKind(next);
    setName(KIND_DEFAULTS[next].name);
    setBaseURL(KIND_DEFAULTS[next].baseURL);
  };
  const setModel = (i: number, patch: Partial<ModelEntry>) =>
    setModels((list) => list.map((m, j) => (j === i ? { ...m, ...patch } : m)));

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {
        id: initial?.id,
        kind,
        name,
        baseURL,
        models: models.filter((m) => m.id.trim()),
        options: {
          ...(reasoningHistory ? { reasoningHistory: reasoningHistory as "drop" | "tool_calls" | "all" } : {}),
          promptCacheKey,
        },
        ...(apiKey ? { apiKey } : {}),
      };
      onSaved(await api("/api/v1/settings/providers", SettingsView, { method: "POST", body }));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const testConnection = async () => {
    setTest(null);
    try {
      setTest(
        await api("/api/v1/settings/test-connection", TestConnectionResult, {
          method: "POST",
          body: { providerId: initial?.id, baseURL, ...(apiKey ? { apiKey } : {}) },
        }),
      );
    } catch (err) {
      setTest({ ok: false, models: [], message: err instanceof Error ? err.message : String(err) });
    }
  };

  const input = "rounded border border-border bg-bg px-2 py-1 outline-none focus:border-accent";
  return (
    <form
      onSubmit={save}
      className="flex flex-col gap-3 rounded-md border border-border bg-panel p-4"
      data-testid="provider-form"
    >
      <div className="grid gap-3 sm:grid-cols-2">
        <label className="flex flex-col gap-1 text-xs text-muted">
          Kind
          <select
            className={input}
            value={kind}
            onChange={(e) => pickKind(e.target.value as ProviderKind)}
            data-testid="provider-kind"
          >
            {Object.entries(KIND_DEFAULTS).map(([value, preset]) => (
              <option key={value} value={value}>
                {preset.name}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs text-muted">
          Name
          <input
            className={input}
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            data-testid="provider-name"
          />
        </label>
        <label className="flex flex-col gap-1 text-xs text-muted sm:col-span-2">
          Base URL
          <input
            className={`${input} font-mono`}
            value={baseURL}
            onChange={(e) => setBaseURL(e.target.value)}
            required
            data-testid="provider-url"
          />
        </label>
        <label className="flex flex-col gap-1 text-xs text-muted sm:col-span-2">
          API key {initial?.hasKey ? <span>(stored: {initial.keyHint}; leave empty to keep)</span> : null}
          <input
            className={`${input} font-mono`}
            type="password"
            autoComplete="off"
            placeholder={KIND_DEFAULTS[kind].keyHint}
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            data-testid="provider-key"
          />
        </label>
      </div>
      <div className="flex flex-wrap items-center gap-4 text-xs text-muted">
        <label
          className="flex items-center gap-1.5"
          title="Which reasoning_content goes back to the provider in history"
        >
          Reasoning in history
          <select
            className={input}
            value={reasoningHistory}
            onChange={(e) => setReasoningHistory(e.target.value)}
            data-testid="provider-reasoning-history"
          >
            <option value="">Default ({kind === "moonshot" ? "tool-call turns" : "drop"})</option>
            <option value="drop">Drop (DeepSeek refuses it)</option>
            <option value="tool_calls">Keep on tool-call turns (Kimi thinking)</option>
            <option value="all">Keep all</option>
          </select>
        </label>
        <label className="flex items-center gap-1.5" title="Send the session id as prompt_cache_key">
          <input
            type="checkbox"
            checked={promptCacheKey}
            onChange={(e) => setPromptCacheKey(e.target.checked)}
            data-testid="provider-cache-key"
          />
          prompt_cache_key
        </label>
      </div>
      {initial?.detected ? <DetectedForms forms={initial.detected} /> : null}
      <fieldset className="flex flex-col gap-1.5">
        <legend className="mb-1 text-xs text-muted">Models</legend>
        {models.map((model, i) => (
          <div key={i} className="flex flex-wrap items-center gap-2 text-xs" data-testid="model-row">
            <input
              className={`${input} min-w-40 flex-1 font-mono`}
              placeholder="model id"
              value={model.id}
              onChange={(e) => setModel(i, { id: e.target.value })}
              aria-label="Model id"
              data-testid="model-id"
            />
            <input
              className={`${input} w-28`}
              type="number"
              min={1}
              value={model.contextWindow}
              onChange={(e) => setModel(i, { contextWindow: Number(e.target.value) || 1 })}
              aria-label="Context window (tokens)"
              title="Context window (tokens)"
            />
            {(["tools", "images", "thinking"] as const).map((cap) => (
              <label key={cap} className="flex items-center gap-1">
                <input
                  type="checkbox"
                  checked={model.capabilities[cap]}
                  onChange={(e) => setModel(i, { capabilities: { ...model.capabilities, [cap]: e.target.checked } })}
                />
                {cap}
              </label>
            ))}
            <button
              type="button"
              className="text-muted hover:text-danger"
              onClick={() => setModels((list) => list.filter((_, j) => j !== i))}
              aria-label="Remove model"
            >
              ×
            </button>
          </div>
        ))}
        <button
          type="button"
          className="self-start text-xs text-accent"
          onClick={() => setModels((list) => [...list, EMPTY_MODEL])}
        >
          + Add model
        </button>
        {test?.ok && test.models.length > 0 ? (
          <div className="text-xs text-muted">
            Served:{" "}
            {test.models.slice(0, 30).map((id) => (
              <button
                key={id}
                type="button"
                className="mr-1 rounded bg-raised px-1 font-mono hover:text-accent"
                onClick={() => setModels((list) => [...list.filter((m) => m.id), { ...EMPTY_MODEL, id }])}
              >
                {id}
              </button>
            ))}
          </div>
        ) : null}
      </fieldset>
      {test ? (
        <p className={test.ok ? "text-ok" : "text-danger"} data-testid="test-result">
          {test.message}
        </p>
      ) : null}
      {error ? <p className="text-danger">{error}</p> : null}
      <div className="flex gap-2">
        <button
          type="submit"
          disabled={busy}
          className="rounded bg-accent px-3 py-1 font-medium text-bg disabled:opacity-40"
          data-testid="provider-save"
        >
          Save
        </button>
        <button
          type="button"
          onClick={() => void testConnection()}
          className="rounded border border-border px-3 py-1 hover:bg-raised"
          data-testid="provider-test"
        >
          Test connection
        </button>
        <button type="button" onClick={onCancel} className="ml-auto rounded px-3 py-1 text-muted hover:text-fg">
          Cancel
        </button>
      </div>
    </form>
  );
}
