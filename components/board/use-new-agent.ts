"use client";

import { useCallback, useEffect, useState } from "react";
import { RecentWorkspaces, RunnerList, SettingsView, type RunnerView, type SessionIsolation } from "@/server/protocol";
import { api, BridgeError, command } from "@/components/transport/client";
import { useIsRepo } from "@/components/shared/use-is-repo";
import { createSession } from "./fleet-api";

/** How many agents one "New agent" may start on the same prompt, each in its own worktree. */
export const MAX_AGENTS = 4;
/** A title is the prompt's start; the bridge keeps at most 200 characters and the card shows two lines. */
const TITLE_CHARS = 60;

export interface AgentForm {
  prompt: string;
  workspace: string;
  isolation: SessionIsolation;
  model: string;
  runner: string;
  count: number;
}

const EMPTY: AgentForm = { prompt: "", workspace: "", isolation: "worktree", model: "", runner: "", count: 1 };

/** What the form offers: recent folders, connected runners, configured models. */
interface Choices {
  recent: string[];
  runners: RunnerView[];
  models: string[];
  defaultModel: string | null;
}

/**
 * The "New agent" form's state and its one action: make `count` sessions (each its own worktree
 * when isolated) and send each the prompt. A folder outside a git repository turns isolation off
 * and says so, rather than editing the folder in place without the user choosing it.
 */
export function useNewAgent(onStarted: () => void) {
  const [form, setForm] = useState<AgentForm>(EMPTY);
  const [choices, setChoices] = useState<Choices>({ recent: [], runners: [], models: [], defaultModel: null });
  /** Whether the lists came (or failed): the folder may then take the most recent one as its default. */
  const [loaded, setLoaded] = useState(false);
  const isRepo = useIsRepo(form.workspace, form.runner);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    // Each list is optional: a failure leaves the field to type into (or this machine, or the default model).
    void Promise.all([
      api("/api/v1/workspaces/recent", RecentWorkspaces).catch(() => []),
      api("/api/v1/runners", RunnerList).catch(() => []),
      api("/api/v1/settings", SettingsView).catch(() => null),
    ]).then(([recent, runners, settings]) => {
      setChoices({
        recent: recent.map((row) => row.path),
        runners: runners.filter((runner) => runner.connected),
        models: [...new Set(settings?.providers.flatMap((provider) => provider.models.map((model) => model.id)) ?? [])],
        defaultModel: settings ? (settings.envModel ?? settings.defaultModel?.model ?? null) : null,
      });
      setForm((current) => (current.workspace || !recent[0] ? current : { ...current, workspace: recent[0].path }));
      setLoaded(true);
    });
  }, []);

  const set = useCallback(<K extends keyof AgentForm>(field: K, value: AgentForm[K]) => {
    setForm((current) => ({
      ...current,
      [field]: value,
      // Several agents on one folder in place would edit the same files: more than one needs worktrees.
      ...(field === "isolation" && value === "none" ? { count: 1 } : {}),
    }));
  }, []);

  const start = async () => {
    const prompt = form.prompt.trim();
    const workspace = form.workspace.trim();
    if (!prompt || !workspace) return;
    setBusy(true);
    setError(null);
    const created: string[] = [];
    try {
      // One after the other: `git worktree add` takes the repository's locks.
      for (let n = 1; n <= form.count; n++) {
        const title = form.count > 1 ? `${titleOf(prompt)} (${n})` : undefined;
        const session = await createSession({
          workspace,
          isolation: form.isolation,
          ...(title ? { title } : {}),
          ...(form.model ? { model: form.model } : {}),
          ...(form.runner ? { runner: form.runner } : {}),
        });
        created.push(session.id);
      }
      await Promise.all(created.map((sessionId) => command("turn.prompt", { sessionId, text: prompt })));
      setForm((current) => ({ ...EMPTY, workspace: current.workspace, runner: current.runner }));
      onStarted();
    } catch (err) {
      if (err instanceof BridgeError && err.code === "worktree:not_a_repo") {
        setForm((current) => ({ ...current, isolation: "none", count: 1 }));
        setError(
          `${err.message} Isolation is now off: the agent would work in the folder itself. Start again to do that.`,
        );
      } else {
        const made = created.length ? ` (${created.length} of ${form.count} started before it)` : "";
        setError(`${err instanceof Error ? err.message : String(err)}${made}`);
      }
    } finally {
      setBusy(false);
    }
  };

  return { form, set, choices, loaded, isRepo, busy, error, start };
}

function titleOf(prompt: string): string {
  const line = prompt.split("\n")[0].trim();
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
}
