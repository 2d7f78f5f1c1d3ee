"use client";

import type { TranscriptState } from "@/server/protocol";
import { CodeEditor } from "./code-editor";
import { useFileDiagnostics } from "./use-file-diagnostics";
import { diffOf, UnifiedDiff } from "./unified-diff";
import type { useOpenFiles } from "./use-open-files";

type OpenFiles = ReturnType<typeof useOpenFiles>;

/** Tabs of files, agent diffs and the session's changes. */
export function EditorArea({ files, state }: { files: OpenFiles; state: TranscriptState }) {
  const tab = files.tabs.find((t) => t.id === files.active) ?? null;
  return (
    <div className="flex h-full min-h-0 flex-col" data-testid="editor-area">
      <div className="flex h-8 shrink-0 items-stretch border-b border-border bg-panel">
        {/* Only tabs inside the tablist: each tab's close button is for the mouse, Delete closes the focused tab. */}
        <div className="flex min-w-0 flex-1 items-stretch overflow-x-auto" role="tablist" aria-label="Open editors">
          {files.tabs.map((t) => {
            const label = t.kind === "file" ? t.path.split("/").pop() : t.kind === "diff" ? t.title : "Session changes";
            const dirty =
              t.kind === "file" && files.buffers[t.path] && files.buffers[t.path].text !== files.buffers[t.path].saved;
            return (
              <div
                key={t.id}
                className={`group flex items-center border-r border-border ${t.id === files.active ? "bg-bg text-fg" : "text-muted"}`}
              >
                <button
                  type="button"
                  role="tab"
                  aria-selected={t.id === files.active}
                  aria-label={`${label}${dirty ? ", unsaved" : ""}`}
                  className="max-w-56 truncate py-1 pl-3 pr-1"
                  onClick={() => files.setActive(t.id)}
                  onKeyDown={(event) => {
                    if (event.key === "Delete") files.close(t.id);
                  }}
                  title={t.kind === "file" ? `${t.path} (Delete closes)` : label}
                  data-testid="editor-tab"
                >
                  {t.kind === "diff" ? "Δ " : ""}
                  {label}
                  {dirty ? (
                    <span className="ml-1 text-accent" data-testid="dirty-dot" aria-hidden>
                      ●
                    </span>
                  ) : null}
                </button>
                <button
                  type="button"
                  aria-hidden
                  tabIndex={-1}
                  title={`Close ${label}`}
                  className="px-2 text-muted hover:text-fg"
                  onClick={() => files.close(t.id)}
                >
                  ×
                </button>
              </div>
            );
          })}
        </div>
        <button
          type="button"
          className="shrink-0 px-3 text-xs text-muted hover:text-fg"
          onClick={files.openChanges}
          data-testid="open-changes"
        >
          Session changes
        </button>
      </div>
      <div className="min-h-0 flex-1">
        {!tab ? (
          <EmptyEditor />
        ) : tab.kind === "file" ? (
          <FilePane files={files} path={tab.path} />
        ) : tab.kind === "diff" ? (
          <div className="h-full overflow-auto p-3">
            <UnifiedDiff diff={tab.diff} maxHeight="none" testId="diff-tab" />
          </div>
        ) : (
          <SessionChanges state={state} onOpen={(path) => files.openFile(path)} />
        )}
      </div>
    </div>
  );
}

function FilePane({ files, path }: { files: OpenFiles; path: string }) {
  const buffer = files.buffers[path];
  const diagnostics = useFileDiagnostics(files.sessionId, path, buffer?.saved ?? "");
  if (!buffer) return <div className="p-4 text-muted">Loading {path}…</div>;
  if (buffer.error && !buffer.hash)
    return (
      <div className="p-4 text-danger" data-testid="editor-error">
        {buffer.error}
      </div>
    );
  if (buffer.binary) return <div className="p-4 text-muted">{path} is a binary file.</div>;
  return (
    <div className="flex h-full min-h-0 flex-col">
      {buffer.conflict ? (
        <div
          className="flex shrink-0 flex-wrap items-center gap-2 border-b border-warn/40 bg-warn/10 px-3 py-1 text-warn"
          role="alert"
          data-testid="editor-conflict"
        >
          {buffer.conflict === "changed_on_disk"
            ? "This file changed on disk while you were editing."
            : "Not saved: the file changed on disk since you opened it."}
          <button
            type="button"
            className="rounded bg-raised px-2 py-0.5 text-fg"
            onClick={() => void files.reload(path)}
            data-testid="conflict-reload"
          >
            Reload from disk
          </button>
          <button
            type="button"
            className="rounded bg-raised px-2 py-0.5 text-fg"
            onClick={() => void files.save(path, true)}
            data-testid="conflict-overwrite"
          >
            Overwrite with mine
          </button>
        </div>
      ) : null}
      {buffer.error ? <div className="shrink-0 bg-danger/10 px-3 py-1 text-danger">{buffer.error}</div> : null}
      <div className="flex h-6 shrink-0 items-center gap-2 border-b border-border px-3 text-[11px] text-muted">
        <span className="truncate font-mono">{path}</span>
        <span className="ml-auto">{buffer.text !== buffer.saved ? "unsaved · Ctrl+S to save" : "saved"}</span>
        <button
          type="button"
          className="rounded px-1.5 hover:bg-raised hover:text-fg"
          onClick={() => void files.save(path)}
          data-testid="editor-save"
        >
          Save
        </button>
      </div>
      <div className="min-h-0 flex-1">
        <CodeEditor
          path={path}
          diagnostics={diagnostics}
          revealLine={files.reveal?.path === path ? files.reveal : undefined}
          value={buffer.text}
          onChange={(text) => files.edit(path, text)}
          onSave={() => void files.save(path)}
        />
      </div>
    </div>
  );
}

function SessionChanges({ state, onOpen }: { state: TranscriptState; onOpen: (path: string) => void }) {
  const edits = state.items.flatMap((item) => {
    if (item.kind !== "tool") return [];
    const diff = diffOf(item.display);
    if (!diff) return [];
    const args = (item.args ?? {}) as Record<string, unknown>;
    return [{ id: item.id, name: item.name, path: typeof args.path === "string" ? args.path : null, diff }];
  });
  return (
    <div className="h-full overflow-auto p-3" data-testid="session-changes">
      {edits.length === 0 ? (
        <p className="text-muted">The agent hasn&apos;t changed any file in this session yet.</p>
      ) : null}
      {edits.map((edit) => (
        <section key={edit.id} className="mb-4">
          <h3 className="mb-1 flex gap-2 font-mono text-xs">
            <span className="text-accent">{edit.name}</span>
            {edit.path ? (
              <button type="button" className="text-fg hover:underline" onClick={() => onOpen(edit.path as string)}>
                {edit.path}
              </button>
            ) : null}
          </h3>
          <UnifiedDiff diff={edit.diff} maxHeight="none" />
        </section>
      ))}
    </div>
  );
}

function EmptyEditor() {
  return (
    <div className="flex h-full flex-col items-center justify-center gap-2 text-muted" data-testid="editor-empty">
      <p>Open a file from the tree, or a diff from the agent&apos;s edits.</p>
      <p className="text-xs">
        <kbd>Ctrl+B</kbd> files · <kbd>Ctrl+J</kbd> terminal · <kbd>Ctrl+L</kbd> chat · <kbd>Ctrl+S</kbd> save
      </p>
    </div>
  );
}
