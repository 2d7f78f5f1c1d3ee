"use client";

import { useEffect, useState } from "react";
import { SessionSummary, SettingsView } from "@/server/protocol";
import { api } from "@/components/transport/client";

/**
 * What the page knows of a session besides its event log: its summary (workspace, model, mode),
 * or why it could not be loaded, and the settings (the default model, what the model takes).
 */
export function useSessionSummary(sessionId: string) {
  const [summary, setSummary] = useState<SessionSummary | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [settings, setSettings] = useState<SettingsView | null>(null);
  const defaultModel = settings ? (settings.envModel ?? settings.defaultModel?.model ?? null) : null;

  useEffect(() => {
    api("/api/v1/settings", SettingsView).then(setSettings, () => undefined); // no settings: no default model shown
  }, []);

  useEffect(() => {
    api(`/api/v1/sessions/${encodeURIComponent(sessionId)}`, SessionSummary).then(setSummary, (err: Error) =>
      setLoadError(err.message),
    );
  }, [sessionId]);

  return { summary, loadError, settings, defaultModel };
}
