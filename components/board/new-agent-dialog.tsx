"use client";

import { Modal } from "@/components/shared/modal";
import { PRIMARY } from "./buttons";
import { MAX_AGENTS, useNewAgent } from "./use-new-agent";

const FIELD = "rounded border border-border bg-bg px-2 py-1 outline-none focus:border-accent max-md:min-h-[44px]";

/**
 * "New agent": a prompt, a folder, isolation (a worktree on a new branch by default), model,
 * machine, and how many agents to start on the same prompt (to compare them). The sessions are
 * made and prompted; their cards then appear on the board.
 */
export function NewAgentDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Modal open={open} onClose={onClose} title="New agent" testId="new-agent-dialog">
      <NewAgentForm onStarted={onClose} />
    </Modal>
  );
}

function NewAgentForm({ onStarted }: { onStarted: () => void }) {
  const { form, set, choices, loaded, isRepo, busy, error, start } = useNewAgent(onStarted);
  const isolated = form.isolation === "worktree";
  return (
    <form
      className="flex flex-col gap-3"
      // Until the recent folders came, the folder field may still fill itself in.
      data-loaded={loaded}
      onSubmit={(event) => {
        event.preventDefault();
        void start();
      }}
    >
      <label className="flex flex-col gap-1">
        <span className="text-xs text-muted">Prompt</span>
        <textarea
          rows={4}
          required
          data-autofocus
          className={FIELD}
          value={form.prompt}
          onChange={(event) => set("prompt", event.target.value)}
          onKeyDown={(event) => {
            // Ctrl/Cmd+Enter starts, as in the session's prompt; Enter alone is a new line.
            if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void start();
            }
          }}
          data-testid="agent-prompt"
        />
      </label>
      <div className="flex flex-wrap gap-2">
        {choices.runners.length > 0 ? (
          <label className="flex flex-col gap-1">
            <span className="text-xs text-muted">Machine</span>
            <select
              className={FIELD}
              value={form.runner}
              onChange={(event) => set("runner", event.target.value)}
              data-testid="agent-runner"
            >
              <option value="">This machine</option>
              {choices.runners.map((runner) => (
                <option key={runner.name} value={runner.name}>
                  {runner.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <label className="flex min-w-0 flex-1 flex-col gap-1">
          <span className="text-xs text-muted">Folder</span>
          <input
            required
            list="agent-recent-folders"
            className={`${FIELD} font-mono`}
            placeholder="/path/to/your/project"
            value={form.workspace}
            onChange={(event) => set("workspace", event.target.value)}
            data-testid="agent-folder"
          />
          <datalist id="agent-recent-folders">
            {choices.recent.map((path) => (
              <option key={path} value={path} />
            ))}
          </datalist>
        </label>
      </div>
      <label className="flex items-center gap-2 max-md:min-h-[44px]">
        <input
          type="checkbox"
          role="switch"
          checked={isolated}
          onChange={(event) => set("isolation", event.target.checked ? "worktree" : "none")}
          aria-describedby="agent-isolation-help"
          data-testid="agent-isolation"
        />
        Own worktree (a new branch; your checkout is not touched)
      </label>
      <p id="agent-isolation-help" className="-mt-2 text-xs text-muted" data-testid="agent-isolation-help">
        {isolated
          ? isRepo
            ? "A git repository: each agent works on its own branch in its own folder."
            : "Needs a git repository with a commit."
          : "The agent edits the folder itself."}
      </p>
      <div className="flex flex-wrap gap-2">
        <label className="flex flex-col gap-1">
          <span className="text-xs text-muted">Model</span>
          <select
            className={FIELD}
            value={form.model}
            onChange={(event) => set("model", event.target.value)}
            data-testid="agent-model"
          >
            <option value="">Default{choices.defaultModel ? ` (${choices.defaultModel})` : ""}</option>
            {choices.models.map((model) => (
              <option key={model} value={model}>
                {model}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col gap-1">
          <span className="text-xs text-muted">Agents</span>
          <select
            className={FIELD}
            value={form.count}
            onChange={(event) => set("count", Number(event.target.value))}
            aria-describedby="agent-count-help"
            data-testid="agent-count"
          >
            {Array.from({ length: MAX_AGENTS }, (_, index) => index + 1).map((n) => (
              <option key={n} value={n} disabled={n > 1 && !isolated}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p id="agent-count-help" className="-mt-2 text-xs text-muted">
        {isolated ? "Several agents get the same prompt, each in its own worktree, to compare." : "One agent in place."}
      </p>
      {error ? (
        <p role="alert" className="text-danger" data-testid="agent-error">
          {error}
        </p>
      ) : null}
      <button
        type="submit"
        className={`${PRIMARY} self-start`}
        disabled={busy || !form.prompt.trim() || !form.workspace.trim()}
        data-testid="agent-start"
      >
        {busy ? "Starting…" : form.count > 1 ? `Start ${form.count} agents` : "Start"}
      </button>
    </form>
  );
}
