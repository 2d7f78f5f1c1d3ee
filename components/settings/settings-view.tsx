"use client";

import { useEffect, useState } from "react";
import { type ProviderView, SettingsView as SettingsData } from "@/server/protocol";
import { api } from "@/components/transport/client";
import { PricesForm } from "./prices-form";
import { LanguageServersSection } from "./language-servers-section";
import { RunnersSection } from "./runners-section";
import { PushDevices } from "@/components/attention/push-devices";
import { AttentionSettings } from "@/components/attention/attention-settings";
import { PeopleSettings } from "@/components/people/people-settings";
import { DetectedForms } from "./detected-forms";
import { ProviderForm } from "./provider-form";

/** /settings: providers and their models, the default model. */
export function SettingsView() {
  const [data, setData] = useState<SettingsData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<ProviderView | "new" | null>(null);

  useEffect(() => {
    api("/api/v1/settings", SettingsData).then(setData, (err: Error) => setError(err.message));
  }, []);

  const remove = async (provider: ProviderView) => {
    if (!window.confirm(`Remove ${provider.name} and its stored key?`)) return;
    setData(
      await api(`/api/v1/settings/providers/${encodeURIComponent(provider.id)}`, SettingsData, { method: "DELETE" }),
    );
  };
  const setDefault = async (value: string) => {
    const [providerId, ...rest] = value.split("::");
    const body = value ? { providerId, model: rest.join("::") } : null;
    setData(await api("/api/v1/settings/default-model", SettingsData, { method: "PUT", body }));
  };

  const options =
    data?.providers.flatMap((p) =>
      p.models.map((m) => ({ value: `${p.id}::${m.id}`, label: `${m.id} — ${p.name}` })),
    ) ?? [];
  const current = data?.defaultModel ? `${data.defaultModel.providerId}::${data.defaultModel.model}` : "";

  return (
    <div className="mx-auto flex max-w-3xl flex-col gap-5 p-6" data-testid="settings-page">
      <h1 className="text-base font-semibold">Settings</h1>
      {error ? <p className="text-danger">{error}</p> : null}
      {!data && !error ? <p className="text-muted">Loading…</p> : null}
      {data ? (
        <>
          <section className="flex flex-col gap-2" aria-labelledby="default-model">
            <h2 id="default-model" className="text-xs font-semibold uppercase tracking-wider text-muted">
              Default model
            </h2>
            {data.envModel ? (
              <p className="text-xs text-warn" data-testid="env-model">
                The environment sets WORLDLINE_MODEL={data.envModel}; it is used while set.
              </p>
            ) : null}
            {data.envModel && data.envDetected ? (
              <DetectedForms forms={data.envDetected} testId="env-detected" />
            ) : null}
            <select
              className="rounded border border-border bg-bg px-2 py-1.5"
              value={current}
              onChange={(e) => void setDefault(e.target.value)}
              aria-labelledby="default-model"
              data-testid="default-model"
            >
              <option value="">None</option>
              {options.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </section>
          <section className="flex flex-col gap-2" aria-labelledby="push-devices">
            <h2 id="push-devices" className="text-xs font-semibold uppercase tracking-wider text-muted">
              Notifications on your devices
            </h2>
            <PushDevices />
          </section>
          <section className="flex flex-col gap-2" aria-labelledby="runners">
            <h2 id="runners" className="text-xs font-semibold uppercase tracking-wider text-muted">
              Runners
            </h2>
            <RunnersSection />
          </section>
          <section className="flex flex-col gap-2" aria-labelledby="language-servers">
            <h2 id="language-servers" className="text-xs font-semibold uppercase tracking-wider text-muted">
              Language servers
            </h2>
            <LanguageServersSection />
          </section>
          <section className="flex flex-col gap-2" aria-labelledby="prices">
            <h2 id="prices" className="text-xs font-semibold uppercase tracking-wider text-muted">
              Model prices
            </h2>
            <PricesForm />
          </section>
          <section className="flex flex-col gap-2" aria-labelledby="providers">
            <div className="flex items-center">
              <h2 id="providers" className="text-xs font-semibold uppercase tracking-wider text-muted">
                Providers
              </h2>
              <button
                type="button"
                className="ml-auto rounded border border-border px-2 py-0.5 hover:bg-raised"
                onClick={() => setEditing("new")}
                data-testid="add-provider"
              >
                + Add provider
              </button>
            </div>
            {editing === "new" ? (
              <ProviderForm onSaved={(view) => (setData(view), setEditing(null))} onCancel={() => setEditing(null)} />
            ) : null}
            {data.providers.length === 0 && editing !== "new" ? (
              <p className="text-muted" data-testid="providers-empty">
                No provider yet. Add OpenAI, Kimi, DeepSeek, OpenRouter, a local Ollama / vLLM / llama.cpp, or any
                OpenAI-compatible URL.
              </p>
            ) : null}
            <ul className="flex flex-col gap-2">
              {data.providers.map((provider) =>
                editing !== "new" && editing?.id === provider.id ? (
                  <li key={provider.id}>
                    <ProviderForm
                      initial={provider}
                      onSaved={(view) => (setData(view), setEditing(null))}
                      onCancel={() => setEditing(null)}
                    />
                  </li>
                ) : (
                  <li
                    key={provider.id}
                    className="rounded-md border border-border bg-panel px-3 py-2"
                    data-testid="provider-item"
                  >
                    <div className="flex items-center gap-2">
                      <span className="font-medium">{provider.name}</span>
                      <span className="truncate font-mono text-xs text-muted">{provider.baseURL}</span>
                      <span className="text-xs text-muted">
                        {provider.hasKey ? `key ${provider.keyHint}` : "no key"}
                      </span>
                      <button
                        type="button"
                        className="ml-auto text-xs text-muted hover:text-fg"
                        onClick={() => setEditing(provider)}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        className="text-xs text-muted hover:text-danger"
                        onClick={() => void remove(provider)}
                      >
                        Remove
                      </button>
                    </div>
                    <ul className="mt-1 flex flex-wrap gap-1.5 text-xs">
                      {provider.models.map((m) => (
                        <li
                          key={m.id}
                          className="rounded bg-raised px-1.5 font-mono"
                          title={`context ${m.contextWindow} tokens`}
                        >
                          {m.id} · {Math.round(m.contextWindow / 1000)}k{m.capabilities.tools ? " · tools" : ""}
                          {m.capabilities.images ? " · images" : ""}
                          {m.capabilities.thinking ? " · thinking" : ""}
                        </li>
                      ))}
                    </ul>
                    {provider.detected ? (
                      <div className="mt-1">
                        <DetectedForms forms={provider.detected} testId="provider-item-detected" />
                      </div>
                    ) : null}
                  </li>
                ),
              )}
            </ul>
          </section>
        </>
      ) : null}
      <AttentionSettings />
      <PeopleSettings />
    </div>
  );
}
