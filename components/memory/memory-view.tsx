"use client";

import * as z from "zod";
import { useCallback, useEffect, useMemo, useState } from "react";
import { Deleted, type MemoryScope, MemorySettings, type MemoryType, MemoryView } from "@/server/protocol";
import { api, BridgeError } from "@/components/transport/client";

const TYPES: MemoryType[] = ["fact", "preference", "note", "lesson"];
const SCOPES: MemoryScope[] = ["global", "workspace", "session"];

/** The /memory page: review what the agent remembers, add to it, delete from it, and the memory settings. */
export function MemoryPage() {
  const [memories, setMemories] = useState<MemoryView[] | null>(null);
  const [settings, setSettings] = useState<MemorySettings | null>(null);
  const [filter, setFilter] = useState<{ type: MemoryType | ""; scope: MemoryScope | ""; q: string }>({
    type: "",
    scope: "",
    q: "",
  });
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(async () => {
    const query = new URLSearchParams();
    if (filter.type) query.set("type", filter.type);
    if (filter.scope) query.set("scope", filter.scope);
    if (filter.q.trim()) query.set("q", filter.q.trim());
    try {
      setMemories(await api(`/api/v1/memory?${query}`, z.array(MemoryView)));
      setError(null);
    } catch (caught) {
      setError(message(caught));
    }
  }, [filter]);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    api("/api/v1/memory/settings", MemorySettings).then(setSettings, (caught: unknown) => setError(message(caught)));
  }, []);

  const remove = async (id: string) => {
    try {
      await api(`/api/v1/memory/${encodeURIComponent(id)}`, Deleted, { method: "DELETE" });
      setMemories((current) => current?.filter((memory) => memory.id !== id) ?? null);
    } catch (caught) {
      setError(message(caught));
    }
  };

  const changeSettings = async (change: Partial<MemorySettings>) => {
    try {
      setSettings(await api("/api/v1/memory/settings", MemorySettings, { method: "PATCH", body: change }));
    } catch (caught) {
      setError(message(caught));
    }
  };

  return (
    <div className="mx-auto flex max-w-4xl flex-col gap-4 p-3 sm:p-6" data-testid="memory-page">
      <header className="flex flex-wrap items-center gap-3">
        <h1 className="text-base font-semibold">Memory</h1>
        {settings ? (
          <div className="ml-auto flex flex-wrap gap-4 text-xs text-muted">
            <label
              className="flex items-center gap-1"
              title="After each turn, decide whether the user said something worth keeping"
            >
              <input
                type="checkbox"
                checked={settings.auto_memory}
                onChange={(event) => void changeSettings({ auto_memory: event.target.checked })}
                data-testid="memory-auto"
              />
              Remember from conversations
            </label>
            <label
              className="flex items-center gap-1"
              title="After a completed task, a critic call stores a reusable lesson"
            >
              <input
                type="checkbox"
                checked={settings.reflection}
                onChange={(event) => void changeSettings({ reflection: event.target.checked })}
                data-testid="memory-reflection"
              />
              Reflect after tasks
            </label>
          </div>
        ) : null}
      </header>
      <AddMemory onAdded={(memory) => setMemories((current) => [memory, ...(current ?? [])])} onError={setError} />
      <div className="flex flex-wrap gap-2 text-sm">
        <input
          className="min-w-48 flex-1 rounded border border-border bg-panel px-2 py-1"
          placeholder="Search memories"
          value={filter.q}
          onChange={(event) => setFilter({ ...filter, q: event.target.value })}
          data-testid="memory-search"
        />
        <select
          className="rounded border border-border bg-panel px-2 py-1"
          value={filter.type}
          onChange={(event) => setFilter({ ...filter, type: event.target.value as MemoryType | "" })}
          aria-label="Filter by type"
          data-testid="memory-filter-type"
        >
          <option value="">All types</option>
          {TYPES.map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
        <select
          className="rounded border border-border bg-panel px-2 py-1"
          value={filter.scope}
          onChange={(event) => setFilter({ ...filter, scope: event.target.value as MemoryScope | "" })}
          aria-label="Filter by scope"
          data-testid="memory-filter-scope"
        >
          <option value="">All scopes</option>
          {SCOPES.map((scope) => (
            <option key={scope} value={scope}>
              {scope}
            </option>
          ))}
        </select>
      </div>
      {error ? (
        <p className="text-sm text-red-400" role="alert" data-testid="memory-error">
          {error}
        </p>
      ) : null}
      <MemoryList memories={memories} onDelete={remove} />
    </div>
  );
}

function MemoryList({ memories, onDelete }: { memories: MemoryView[] | null; onDelete: (id: string) => void }) {
  if (memories === null) return <p className="text-sm text-muted">Loading…</p>;
  if (memories.length === 0) {
    return (
      <p className="text-sm text-muted" data-testid="memory-empty">
        Nothing remembered yet. Tell the agent “remember that …”, or add a memory above.
      </p>
    );
  }
  return (
    <ul className="flex flex-col divide-y divide-border rounded border border-border" data-testid="memory-list">
      {memories.map((memory) => (
        <li key={memory.id} className="flex items-start gap-3 p-3" data-testid="memory-item" data-memory-id={memory.id}>
          <div className="min-w-0 flex-1">
            <p className="whitespace-pre-wrap break-words text-sm" data-testid="memory-text">
              {memory.text}
            </p>
            <p className="mt-1 flex flex-wrap gap-2 text-xs text-muted">
              <span className="rounded bg-raised px-1">{memory.type}</span>
              <span>
                {memory.scope === "workspace"
                  ? `workspace ${memory.workspace ?? ""}`
                  : memory.scope === "session"
                    ? `session ${memory.session_id ?? ""}`
                    : "global"}
              </span>
              <span>importance {memory.importance}</span>
              <span>from {memory.source}</span>
              <time dateTime={memory.created_at}>{new Date(memory.created_at).toLocaleString()}</time>
            </p>
          </div>
          <button
            type="button"
            className="rounded px-2 py-1 text-xs text-muted hover:bg-raised hover:text-fg"
            onClick={() => onDelete(memory.id)}
            data-testid="memory-delete"
            aria-label={`Delete memory: ${memory.text}`}
          >
            Delete
          </button>
        </li>
      ))}
    </ul>
  );
}

function AddMemory({
  onAdded,
  onError,
}: {
  onAdded: (memory: MemoryView) => void;
  onError: (message: string) => void;
}) {
  const [text, setText] = useState("");
  const [type, setType] = useState<MemoryType>("fact");
  const [importance, setImportance] = useState(3);
  const [workspace, setWorkspace] = useState("");
  const scope: MemoryScope = useMemo(() => (workspace.trim() ? "workspace" : "global"), [workspace]);

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    if (!text.trim()) return;
    try {
      onAdded(
        await api("/api/v1/memory", MemoryView, {
          method: "POST",
          body: { text, type, scope, importance, ...(scope === "workspace" ? { workspace: workspace.trim() } : {}) },
        }),
      );
      setText("");
    } catch (caught) {
      onError(message(caught));
    }
  };

  return (
    <form
      className="flex flex-wrap items-center gap-2 text-sm"
      onSubmit={(event) => void submit(event)}
      data-testid="memory-add"
    >
      <input
        className="min-w-64 flex-[2] rounded border border-border bg-panel px-2 py-1"
        placeholder="Something the agent should remember"
        value={text}
        onChange={(event) => setText(event.target.value)}
        data-testid="memory-add-text"
      />
      <select
        className="rounded border border-border bg-panel px-2 py-1"
        value={type}
        onChange={(event) => setType(event.target.value as MemoryType)}
        aria-label="Type of the new memory"
        data-testid="memory-add-type"
      >
        {TYPES.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
      <input
        className="min-w-40 flex-1 rounded border border-border bg-panel px-2 py-1"
        placeholder="Workspace folder (empty: global)"
        value={workspace}
        onChange={(event) => setWorkspace(event.target.value)}
        data-testid="memory-add-workspace"
      />
      <label className="flex items-center gap-1 text-xs text-muted">
        Importance
        <input
          type="number"
          min={1}
          max={5}
          className="w-12 rounded border border-border bg-panel px-1 py-1"
          value={importance}
          onChange={(event) => setImportance(Number(event.target.value) || 3)}
          data-testid="memory-add-importance"
        />
      </label>
      <button type="submit" className="rounded bg-raised px-3 py-1 hover:text-fg" data-testid="memory-add-submit">
        Remember
      </button>
    </form>
  );
}

function message(error: unknown): string {
  return error instanceof BridgeError || error instanceof Error ? error.message : String(error);
}
