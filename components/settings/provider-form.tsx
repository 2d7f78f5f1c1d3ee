"use client";

import { useState, type Dispatch, type FormEvent } from "react";
import { type ProviderKind, type ProviderView, SettingsView, TestConnectionResult } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { Button } from "@/components/shared/button";
import { DetectedForms } from "./detected-forms";
import { KIND_DEFAULTS } from "./presets";
import { type DraftEdit, type ProviderDraft, providerBody, useProviderDraft } from "./use-provider-draft";

const INPUT = "rounded border border-border bg-bg px-2 py-1 outline-none focus:border-accent";
const FIELD = "flex flex-col gap-1 text-xs text-muted";
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

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
  const [draft, edit] = useProviderDraft(initial);
  const [test, setTest] = useState<TestConnectionResult | null>(null);
  const [saving, setSaving] = useState<{ busy: boolean; error?: string }>({ busy: false });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaving({ busy: true });
    try {
      const body = providerBody(draft, initial?.id);
      onSaved(await api("/api/v1/settings/providers", SettingsView, { method: "POST", body }));
      setSaving({ busy: false });
    } catch (err) {
      setSaving({ busy: false, error: messageOf(err) });
    }
  };

  const testConnection = async () => {
    setTest(null);
    const body = { providerId: initial?.id, baseURL: draft.baseURL, ...(draft.apiKey ? { apiKey: draft.apiKey } : {}) };
    setTest(
      await api("/api/v1/settings/test-connection", TestConnectionResult, { method: "POST", body }).catch(
        (err: unknown) => ({ ok: false, models: [], message: messageOf(err) }),
      ),
    );
  };

  return (
    <form
      onSubmit={save}
      className="flex flex-col gap-3 rounded-md border border-border bg-panel p-4"
      data-testid="provider-form"
    >
      <ConnectionFields draft={draft} edit={edit} initial={initial} />
      <HistoryOptions draft={draft} edit={edit} />
      {initial?.detected ? <DetectedForms forms={initial.detected} /> : null}
      <ModelRows draft={draft} edit={edit} served={test?.ok ? test.models : []} />
      {test ? (
        <p className={test.ok ? "text-ok" : "text-danger"} data-testid="test-result">
          {test.message}
        </p>
      ) : null}
      {saving.error ? <p className="text-danger">{saving.error}</p> : null}
      <div className="flex gap-2">
        <Button type="submit" look="primary" disabled={saving.busy} data-testid="provider-save">
          Save
        </Button>
        <Button onClick={() => void testConnection()} data-testid="provider-test">
          Test connection
        </Button>
        <Button look="quiet" onClick={onCancel} className="ml-auto">
          Cancel
        </Button>
      </div>
    </form>
  );
}

interface DraftProps {
  draft: ProviderDraft;
  edit: Dispatch<DraftEdit>;
}

/** Kind, name, base URL and the write-only key. */
function ConnectionFields({ draft, edit, initial }: DraftProps & { initial?: ProviderView }) {
  return (
    <div className="grid gap-3 sm:grid-cols-2">
      <label className={FIELD}>
        Kind
        <select
          className={INPUT}
          value={draft.kind}
          onChange={(e) => edit({ kind: e.target.value as ProviderKind })}
          data-testid="provider-kind"
        >
          {Object.entries(KIND_DEFAULTS).map(([value, preset]) => (
            <option key={value} value={value}>
              {preset.name}
            </option>
          ))}
        </select>
      </label>
      <label className={FIELD}>
        Name
        <input
          className={INPUT}
          value={draft.name}
          onChange={(e) => edit({ name: e.target.value })}
          required
          data-testid="provider-name"
        />
      </label>
      <label className={`${FIELD} sm:col-span-2`}>
        Base URL
        <input
          className={`${INPUT} font-mono`}
          value={draft.baseURL}
          onChange={(e) => edit({ baseURL: e.target.value })}
          required
          data-testid="provider-url"
        />
      </label>
      <label className={`${FIELD} sm:col-span-2`}>
        API key {initial?.hasKey ? <span>(stored: {initial.keyHint}; leave empty to keep)</span> : null}
        <input
          className={`${INPUT} font-mono`}
          type="password"
          autoComplete="off"
          placeholder={KIND_DEFAULTS[draft.kind].keyHint}
          value={draft.apiKey}
          onChange={(e) => edit({ apiKey: e.target.value })}
          data-testid="provider-key"
        />
      </label>
    </div>
  );
}

/** What of the model's reasoning goes back in history, and the prompt cache key. */
function HistoryOptions({ draft, edit }: DraftProps) {
  return (
    <div className="flex flex-wrap items-center gap-4 text-xs text-muted">
      <label className="flex items-center gap-1.5" title="Which reasoning_content goes back to the provider in history">
        Reasoning in history
        <select
          className={INPUT}
          value={draft.reasoningHistory}
          onChange={(e) => edit({ reasoningHistory: e.target.value as ProviderDraft["reasoningHistory"] })}
          data-testid="provider-reasoning-history"
        >
          <option value="">Default ({draft.kind === "moonshot" ? "tool-call turns" : "drop"})</option>
          <option value="drop">Drop (DeepSeek refuses it)</option>
          <option value="tool_calls">Keep on tool-call turns (Kimi thinking)</option>
          <option value="all">Keep all</option>
        </select>
      </label>
      <label className="flex items-center gap-1.5" title="Send the session id as prompt_cache_key">
        <input
          type="checkbox"
          checked={draft.promptCacheKey}
          onChange={(e) => edit({ promptCacheKey: e.target.checked })}
          data-testid="provider-cache-key"
        />
        prompt_cache_key
      </label>
    </div>
  );
}

/** One row per model (id, context window, capabilities), and the served models a test found, to pick. */
function ModelRows({ draft, edit, served }: DraftProps & { served: string[] }) {
  return (
    <fieldset className="flex flex-col gap-1.5">
      <legend className="mb-1 text-xs text-muted">Models</legend>
      {draft.models.map((model, i) => (
        <div key={i} className="flex flex-wrap items-center gap-2 text-xs" data-testid="model-row">
          <input
            className={`${INPUT} min-w-40 flex-1 font-mono`}
            placeholder="model id"
            value={model.id}
            onChange={(e) => edit({ model: i, patch: { id: e.target.value } })}
            aria-label="Model id"
            data-testid="model-id"
          />
          <input
            className={`${INPUT} w-28`}
            type="number"
            min={1}
            value={model.contextWindow}
            onChange={(e) => edit({ model: i, patch: { contextWindow: Number(e.target.value) || 1 } })}
            aria-label="Context window (tokens)"
            title="Context window (tokens)"
          />
          {(["tools", "images", "thinking"] as const).map((cap) => (
            <label key={cap} className="flex items-center gap-1">
              <input
                type="checkbox"
                checked={model.capabilities[cap]}
                onChange={(e) =>
                  edit({ model: i, patch: { capabilities: { ...model.capabilities, [cap]: e.target.checked } } })
                }
              />
              {cap}
            </label>
          ))}
          <button
            type="button"
            className="text-muted hover:text-danger"
            onClick={() => edit({ removeModel: i })}
            aria-label="Remove model"
          >
            ×
          </button>
        </div>
      ))}
      <button type="button" className="self-start text-xs text-accent" onClick={() => edit({ addModel: "" })}>
        + Add model
      </button>
      {served.length > 0 ? (
        <div className="text-xs text-muted">
          Served:{" "}
          {served.slice(0, 30).map((id) => (
            <button
              key={id}
              type="button"
              className="mr-1 rounded bg-raised px-1 font-mono hover:text-accent"
              onClick={() => edit({ addModel: id })}
            >
              {id}
            </button>
          ))}
        </div>
      ) : null}
    </fieldset>
  );
}
