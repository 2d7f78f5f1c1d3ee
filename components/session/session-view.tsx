"use client";

import { useEffect, useState } from "react";
import type { SessionSummary, SettingsView } from "@/server/protocol";
import { EditorArea } from "@/components/editor/editor-area";
import { useOpenFiles } from "@/components/editor/use-open-files";
import { FileTree } from "@/components/files/file-tree";
import { Timeline } from "@/components/timeline/timeline";
import { useFileTree } from "@/components/files/use-file-tree";
import { api } from "@/components/transport/client";
import { modelTakesImages } from "./attachments";
import { PromptInput } from "./prompt-input";
import { Splitter } from "./splitter";
import { StatusBar } from "./status-bar";
import { TerminalPanel } from "@/components/terminal/terminal-panel";
import { Transcript } from "./transcript";
import { useLayout } from "./use-layout";
import { useSession } from "./use-session";
import { PresenceBar } from "./presence-bar";
import { ShareDialog, useAccess } from "./share-dialog";
import { McpStatus } from "./mcp-status";
import { ChangesView } from "@/components/review/changes-view";
import { SessionTitle } from "./session-title";
import { AttentionMenu } from "@/components/attention/attention-menu";
import { useSessionAttention } from "@/components/attention/use-session-attention";

/** Below this width the IDE shows one pane at a time (reading and approving on a phone). */
const NARROW_PX = 768;
type Pane = "agent" | "files" | "editor" | "terminal";

/** The session page: file tree | editor and diffs | agent, terminals below, status at the bottom. */
export function SessionView({ sessionId }: { sessionId: string }) {
  const { state, connection, error, presence, noteTyping } = useSession(sessionId);
  const [summary, setSummary] = useState<SessionSummary | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const { layout, update } = useLayout();
  const tree = useFileTree(sessionId);
  const files = useOpenFiles(sessionId);
  const narrow = useNarrow();
  const [pane, setPane] = useState<Pane>("agent");
  const [timelineOpen, setTimelineOpen] = useState(false);
  const [changesOpen, setChangesOpen] = useState(false);
  const access = useAccess();
  useSessionAttention(sessionId, state.title ?? summary?.title, () => setPane("agent"));

  const [settings, setSettings] = useState<SettingsView | null>(null);
  const defaultModel = settings ? (settings.envModel ?? settings.defaultModel?.model ?? null) : null;
  useEffect(() => {
    api<SettingsView>("/api/v1/settings").then(setSettings, () => undefined);
  }, []);

  useEffect(() => {
    api<SessionSummary>(`/api/v1/sessions/${encodeURIComponent(sessionId)}`).then(setSummary, (err: Error) =>
      setLoadError(err.message),
    );
  }, [sessionId]);

  useEffect(() => {
    if (state.title) document.title = `${state.title} · Worldline`;
  }, [state.title]);

  const { onDiskChange } = files;
  useEffect(() => {
    if (tree.changed) void onDiskChange(tree.changed.paths);
    // Only a new change batch should trigger a check, not every buffer edit.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tree.changed]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey)) return;
      if (event.key === "b") {
        event.preventDefault();
        update({ treeOpen: !layout.treeOpen });
      } else if (event.key === "j") {
        event.preventDefault();
        update({ bottomOpen: !layout.bottomOpen });
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [layout.treeOpen, layout.bottomOpen, update]);

  if (loadError) {
    return (
      <div className="p-6 text-danger" data-testid="session-error">
        {loadError}
      </div>
    );
  }

  const openFile = (path: string) => {
    files.openFile(path);
    if (narrow) setPane("editor");
  };
  const openDiff = (title: string, diff: string) => {
    files.openDiff(title, diff);
    if (narrow) setPane("editor");
  };
  const activeFile = files.tabs.find((t) => t.id === files.active);
  const treeView = (
    <FileTree {...tree} activePath={activeFile?.kind === "file" ? activeFile.path : null} onOpen={openFile} />
  );
  const agentView = (
    <>
      {error ? <div className="border-b border-border bg-danger/10 px-3 py-1 text-danger">{error}</div> : null}
      <Transcript state={state} onOpenDiff={openDiff} sessionId={sessionId} />
      {access?.access === "view" ? (
        <div
          className="shrink-0 border-t border-border bg-panel px-3 py-2 text-center text-xs text-muted"
          data-testid="view-only-notice"
        >
          You are viewing this session through a view-only link: it updates live, but you cannot prompt or approve.
        </div>
      ) : (
        <PromptInput
          sessionId={sessionId}
          workspace={summary?.workspace ?? ""}
          running={state.running !== null}
          stage={state.running?.stage}
          yolo={Boolean(state.yolo)}
          plan={(state.mode ?? summary?.mode) === "plan"}
          imagesAllowed={modelTakesImages(settings, state.model ?? summary?.model)}
        />
      )}
    </>
  );
  const show = (p: Pane) => !narrow || pane === p;

  return (
    <div className="flex h-full flex-col" data-testid="ide" data-narrow={narrow}>
      <header className="flex h-8 shrink-0 items-center gap-2 border-b border-border px-3 text-muted">
        <SessionTitle sessionId={sessionId} title={state.title ?? summary?.title} />
        <span className="hidden truncate font-mono text-xs sm:inline" title={summary?.workspace}>
          {summary?.workspace}
        </span>
        <span
          className="shrink-0 text-xs"
          data-testid="session-machine"
          title="Where the session's tools and files are"
        >
          {summary ? (summary.runner ? `on runner ${summary.runner}` : "on this machine") : null}
        </span>
        <span className="ml-auto flex items-center gap-1 text-xs">
          <PresenceBar presence={presence} running={state.running !== null} noteTyping={noteTyping} />
          <McpStatus sessionId={sessionId} refreshKey={state.running?.turnId ?? null} />
          <ShareDialog sessionId={sessionId} />
          <AttentionMenu sessionId={sessionId} />
          {!narrow ? (
            <>
              <ToggleButton
                on={layout.treeOpen}
                onClick={() => update({ treeOpen: !layout.treeOpen })}
                label="Files"
                shortcut="Ctrl+B"
                testId="toggle-tree"
              />
              <ToggleButton
                on={layout.bottomOpen}
                onClick={() => update({ bottomOpen: !layout.bottomOpen })}
                label="Terminal"
                shortcut="Ctrl+J"
                testId="toggle-terminal"
              />
            </>
          ) : null}
          <button
            type="button"
            aria-pressed={changesOpen}
            onClick={() => {
              setChangesOpen(!changesOpen);
              if (narrow && !changesOpen) setPane("editor");
            }}
            className={`rounded px-2 py-0.5 hover:bg-raised ${changesOpen ? "text-fg" : ""}`}
            title="Review what the session changed: accept or revert per hunk and file"
            data-testid="toggle-changes"
          >
            Changes
          </button>
          <button
            type="button"
            aria-pressed={timelineOpen}
            onClick={() => setTimelineOpen(!timelineOpen)}
            className={`rounded px-2 py-0.5 hover:bg-raised ${timelineOpen ? "text-fg" : ""}`}
            title="Checkpoints: rewind, undo, fork"
            data-testid="toggle-timeline"
          >
            Timeline
          </button>
          <button
            type="button"
            className="rounded px-2 py-0.5 hover:bg-raised hover:text-fg"
            onClick={() => update({ theme: layout.theme === "light" ? "dark" : "light" })}
            data-testid="toggle-theme"
            aria-label="Switch between dark and light theme"
          >
            {layout.theme === "light" ? "☾ Dark" : "☀ Light"}
          </button>
        </span>
      </header>
      {narrow ? (
        <nav className="flex shrink-0 border-b border-border text-xs" aria-label="Panes" data-testid="pane-tabs">
          {(["agent", "files", "editor", "terminal"] as Pane[]).map((p) => (
            <button
              key={p}
              type="button"
              aria-pressed={pane === p}
              onClick={() => setPane(p)}
              className={`flex-1 py-1.5 capitalize ${pane === p ? "border-b-2 border-accent text-fg" : "text-muted"}`}
              data-testid={`pane-${p}`}
            >
              {p}
              {p === "agent" && Object.keys(state.approvals).length > 0 ? (
                <span className="ml-1 text-warn">●</span>
              ) : null}
            </button>
          ))}
        </nav>
      ) : null}
      <div className="flex min-h-0 flex-1">
        {show("files") && (narrow || layout.treeOpen) ? (
          <>
            <aside
              className="flex min-h-0 shrink-0 flex-col bg-panel"
              style={narrow ? { flex: 1 } : { width: layout.treeWidth }}
              aria-label="Files"
              data-testid="tree-panel"
            >
              <div className="flex h-7 shrink-0 items-center px-3 text-[11px] font-semibold uppercase tracking-wider text-muted">
                Files
                {tree.git?.repo ? <span className="ml-2 font-normal normal-case">git</span> : null}
              </div>
              {treeView}
            </aside>
            {!narrow ? (
              <Splitter
                direction="vertical"
                label="Resize file tree"
                testId="split-tree"
                start={() => layout.treeWidth}
                onResize={(w) => update({ treeWidth: clamp(w, 140, 600) })}
              />
            ) : null}
          </>
        ) : null}
        {show("editor") || show("terminal") ? (
          <div className="flex min-w-0 flex-1 flex-col">
            {show("editor") ? (
              <div className="min-h-0 flex-1">
                {changesOpen ? (
                  <ChangesView sessionId={sessionId} state={state} onClose={() => setChangesOpen(false)} />
                ) : (
                  <EditorArea files={files} state={state} />
                )}
              </div>
            ) : null}
            {(narrow && pane === "terminal") || (!narrow && layout.bottomOpen) ? (
              <>
                {!narrow ? (
                  <Splitter
                    direction="horizontal"
                    label="Resize terminal panel"
                    testId="split-bottom"
                    start={() => layout.bottomHeight}
                    onResize={(h) => update({ bottomHeight: clamp(h, 80, 900) })}
                  />
                ) : null}
                <div
                  className="min-h-0 shrink-0 bg-panel"
                  style={narrow ? { flex: 1 } : { height: layout.bottomHeight }}
                  data-testid="bottom-panel"
                >
                  <TerminalPanel sessionId={sessionId} />
                </div>
              </>
            ) : null}
          </div>
        ) : null}
        {timelineOpen && (!narrow || pane === "agent") ? (
          <aside
            className="flex min-h-0 w-72 shrink-0 flex-col border-l border-border bg-panel"
            aria-label="Timeline"
            data-testid="timeline-panel"
          >
            <Timeline
              sessionId={sessionId}
              state={state}
              onOpenDiff={openDiff}
              onForked={(fork) => window.location.assign(`/s/${encodeURIComponent(fork.id)}`)}
            />
          </aside>
        ) : null}
        {show("agent") ? (
          <>
            {!narrow ? (
              <Splitter
                direction="vertical"
                label="Resize agent panel"
                testId="split-agent"
                start={() => layout.agentWidth}
                onResize={(w) => update({ agentWidth: clamp(w, 300, 1400) })}
              />
            ) : null}
            <section
              className="flex min-h-0 min-w-0 flex-col border-l border-border"
              style={narrow ? { flex: 1 } : { width: layout.agentWidth }}
              aria-label="Agent"
              data-testid="agent-panel"
            >
              {agentView}
            </section>
          </>
        ) : null}
      </div>
      <StatusBar
        state={state}
        connection={connection}
        model={state.model ?? summary?.model ?? defaultModel}
        viewers={presence?.viewers.length ?? null}
        onShowApprovals={() => setPane("agent")}
      />
    </div>
  );
}

function ToggleButton({
  on,
  onClick,
  label,
  shortcut,
  testId,
}: {
  on: boolean;
  onClick: () => void;
  label: string;
  shortcut: string;
  testId: string;
}) {
  return (
    <button
      type="button"
      aria-pressed={on}
      onClick={onClick}
      className={`rounded px-2 py-0.5 hover:bg-raised ${on ? "text-fg" : ""}`}
      title={`${label} (${shortcut})`}
      data-testid={testId}
    >
      {label} <kbd className="text-[10px] text-muted">{shortcut}</kbd>
    </button>
  );
}

function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(false);
  useEffect(() => {
    const query = window.matchMedia(`(max-width: ${NARROW_PX - 1}px)`);
    const sync = () => setNarrow(query.matches);
    sync();
    query.addEventListener("change", sync);
    return () => query.removeEventListener("change", sync);
  }, []);
  return narrow;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
