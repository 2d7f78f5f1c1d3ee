"use client";

import * as z from "zod";
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { Deleted, RuleView } from "@/server/protocol";
import { api } from "@/components/transport/client";

const ACTION_STYLE: Record<string, string> = { allow: "text-ok", ask: "text-warn", deny: "text-danger" };

/** Stored allow / ask / deny rules: list, add, delete. A deny always beats an allow. */
export function RulesPanel() {
  const [rules, setRules] = useState<RuleView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [form, setForm] = useState({
    tool: "shell",
    pattern: "",
    action: "deny",
    scope: "global",
    target: "",
    hours: "",
  });

  const reload = useCallback(() => {
    api("/api/v1/rules", z.array(RuleView)).then(setRules, (err: Error) => setError(err.message));
  }, []);
  useEffect(reload, [reload]);

  const add = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await api("/api/v1/rules", RuleView, {
        method: "POST",
        body: {
          tool: form.tool,
          pattern: form.pattern,
          action: form.action,
          scope: form.scope,
          ...(form.scope === "session" && form.target ? { session_id: form.target } : {}),
          ...(form.scope === "workspace" && form.target ? { workspace: form.target } : {}),
          ...(form.hours ? { expires_in_seconds: Math.round(Number(form.hours) * 3600) } : {}),
        },
      });
      setForm({ ...form, pattern: "", hours: "" });
      reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const remove = async (id: string) => {
    await api(`/api/v1/rules/${id}`, Deleted, { method: "DELETE" }).catch((err: Error) => setError(err.message));
    reload();
  };
  const field = "rounded border border-border bg-bg px-2 py-1 outline-none focus:border-accent";

  return (
    <div className="flex flex-col gap-4" data-testid="rules-panel">
      <p className="text-xs text-muted">
        Rules match a tool (glob, e.g. <code>shell</code>, <code>write_file</code>, <code>*</code>) and a glob over the
        command or path (<code>git status*</code>, <code>src/**</code>). Deny beats ask beats allow; yolo never
        overrides a deny, and a wildcard allow never approves a chained command.
      </p>
      <form
        onSubmit={add}
        className="flex flex-wrap items-end gap-2 rounded-md border border-border bg-panel p-3"
        data-testid="rule-form"
      >
        <label className="flex flex-col gap-1 text-xs">
          Tool
          <input
            className={field}
            value={form.tool}
            onChange={(e) => setForm({ ...form, tool: e.target.value })}
            required
            data-testid="rule-tool"
          />
        </label>
        <label className="flex min-w-40 flex-1 flex-col gap-1 text-xs">
          Pattern
          <input
            className={`${field} font-mono`}
            value={form.pattern}
            onChange={(e) => setForm({ ...form, pattern: e.target.value })}
            placeholder="git push*"
            required
            data-testid="rule-pattern"
          />
        </label>
        <label className="flex flex-col gap-1 text-xs">
          Action
          <select
            className={field}
            value={form.action}
            onChange={(e) => setForm({ ...form, action: e.target.value })}
            data-testid="rule-action"
          >
            <option value="allow">allow</option>
            <option value="ask">ask</option>
            <option value="deny">deny</option>
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs">
          Scope
          <select
            className={field}
            value={form.scope}
            onChange={(e) => setForm({ ...form, scope: e.target.value })}
            data-testid="rule-scope"
          >
            <option value="global">global</option>
            <option value="workspace">workspace</option>
            <option value="session">session</option>
          </select>
        </label>
        {form.scope !== "global" ? (
          <label className="flex flex-col gap-1 text-xs">
            {form.scope === "session" ? "Session id" : "Folder"}
            <input
              className={field}
              value={form.target}
              onChange={(e) => setForm({ ...form, target: e.target.value })}
              required
            />
          </label>
        ) : null}
        <label className="flex w-24 flex-col gap-1 text-xs">
          Expires (h)
          <input
            className={field}
            type="number"
            min="0"
            step="0.5"
            value={form.hours}
            onChange={(e) => setForm({ ...form, hours: e.target.value })}
            placeholder="never"
          />
        </label>
        <button
          type="submit"
          className="rounded bg-accent/20 px-3 py-1.5 text-accent hover:bg-accent/30"
          data-testid="rule-add"
        >
          Add rule
        </button>
      </form>
      {error ? (
        <p className="text-danger" role="alert">
          {error}
        </p>
      ) : null}
      {rules === null ? (
        <p className="text-muted">Loading…</p>
      ) : rules.length === 0 ? (
        <p className="text-muted">No rules yet.</p>
      ) : (
        <ul className="divide-y divide-border rounded-md border border-border bg-panel">
          {rules.map((rule) => {
            const expired = rule.expires_at !== null && new Date(rule.expires_at) <= new Date();
            return (
              <li
                key={rule.id}
                className={`flex flex-wrap items-center gap-2 px-3 py-2 text-xs ${expired ? "text-muted" : ""}`}
                data-testid="rule-row"
              >
                <span className={`w-10 font-medium ${ACTION_STYLE[rule.action] ?? ""}`}>{rule.action}</span>
                <span className="font-mono text-accent">{rule.tool}</span>
                <code className="break-all">{rule.pattern}</code>
                <span className="text-muted">
                  {rule.scope}
                  {rule.scope === "workspace" && rule.workspace ? ` · ${rule.workspace}` : ""}
                  {rule.scope === "session" && rule.session_id ? ` · ${rule.session_id}` : ""}
                  {rule.expires_at
                    ? ` · ${expired ? "expired" : "until"} ${new Date(rule.expires_at).toLocaleString()}`
                    : ""}
                </span>
                <button
                  type="button"
                  className="ml-auto rounded px-2 py-0.5 text-muted hover:bg-danger/15 hover:text-danger"
                  onClick={() => void remove(rule.id)}
                  data-testid="rule-delete"
                >
                  Delete
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
