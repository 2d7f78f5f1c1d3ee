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
import { useAccess } from "./share-dialog";
import { ChangesView } from "@/components/review/changes-view";
import { useSessionAttention } from "@/components/attention/use-session-attention";
import { focusWhenReady } from "@/components/shell/focus";
import { Announcer } from "./announcer";
import { PaneBar, SessionHeader, type Pane, type SessionHeaderProps } from "./session-header";

/** Below this width the IDE shows one pane at a time (reading and approving on a phone). */
const NARROW_PX = 768;
/** Where session shortcuts put the keyboard. */
const PROMPT = '[data-testid="prompt-input"]';
const TERMINAL_INPUT = '[data-testid="terminal-view"][data-status="live"] .xterm-helper-textarea';
const TREE_ROW = '[role="tree"] [tabindex="0"], [data-testid="file-tree"]:not([role="tree"])';
const WAITING_APPROVAL = '[data-testid="tool-card"][data-state="waiting_approval"] [data-testid="approval-allow-once"]';

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
      const key = event.key.toLowerCase();
      const handled = () => event.preventDefault();
      if (key === "b" && !event.shiftKey) {
        handled();
        update({ treeOpen: !layout.treeOpen });
      } else if (key === "j" && !event.shiftKey) {
        handled();
        update({ bottomOpen: !layout.bottomOpen });
      } else if (key === "`" && event.ctrlKey) {
        // Into the terminal, or from it back to the prompt: a terminal takes Tab, so it needs a way out.
        handled();
        const inTerminal = document.activeElement?.closest('[data-testid="terminal-panel"]');
        if (inTerminal) {
          if (narrow) setPane("agent");
          focusWhenReady(PROMPT);
        } else {
          if (narrow) setPane("terminal");
          else if (!layout.bottomOpen) update({ bottomOpen: true });
          focusWhenReady(TERMINAL_INPUT);
        }
      } else if (key === "e" && event.shiftKey) {
        handled();
        if (narrow) setPane("files");
        else if (!layout.treeOpen) update({ treeOpen: true });
        focusWhenReady(TREE_ROW);
      } else if (key === "g" && event.shiftKey) {
        handled();
        setChangesOpen((open) => !open);
        if (narrow) setPane("editor");
        focusWhenReady('[data-testid="changes-view"] [data-testid="changes-file"]');
      } else if (key === "h" && event.shiftKey) {
        handled();
        setTimelineOpen((open) => !open);
        if (narrow) setPane("agent");
        focusWhenReady('[data-testid="timeline-panel"] button');
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [layout.treeOpen, layout.bottomOpen, update, narrow]);

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
      <Announcer state={state} live={connection === "live"} error={error} />
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
  const header: SessionHeaderProps = {
    sessionId,
    title: state.title ?? summary?.title,
    workspace: summary?.workspace,
    presence,
    running: state.running !== null,
    turnId: state.running?.turnId ?? null,
    noteTyping,
    narrow,
    layout,
    update,
    changesOpen,
    onToggleChanges: () => {
      setChangesOpen(!changesOpen);
      if (narrow && !changesOpen) setPane("editor");
    },
    timelineOpen,
    onToggleTimeline: () => setTimelineOpen(!timelineOpen),
  };

  return (
    <div className="flex h-full flex-col" data-testid="ide" data-narrow={narrow}>
      <SessionHeader {...header} />
      {narrow ? (
        <PaneBar
          pane={pane}
          onPane={setPane}
          approvalsWaiting={Object.keys(state.approvals).length > 0}
          header={header}
        />
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
              <div className="flex h-7 shrink-0 items-center px-3 text-[11px] font-semibold uppercase tracking-wider text-muted max-md:h-[44px]">
                Files
                {tree.git?.repo ? <span className="ml-2 font-normal normal-case">git</span> : null}
                <button
                  type="button"
                  aria-pressed={tree.showIgnored}
                  onClick={() => tree.setShowIgnored(!tree.showIgnored)}
                  className={`ml-auto rounded px-1.5 font-normal normal-case hover:bg-raised hover:text-fg max-md:min-h-[44px] ${tree.showIgnored ? "text-fg" : ""}`}
                  title="List what git ignores too (.git stays hidden)"
                  data-testid="tree-show-ignored"
                >
                  Show ignored
                </button>
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
        onShowApprovals={() => {
          // "N pending approvals" takes the keyboard to the first request's decision.
          setPane("agent");
          focusWhenReady(WAITING_APPROVAL);
        }}
      />
    </div>
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
