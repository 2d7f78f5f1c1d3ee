"use client";

import { useEffect, useState } from "react";
import { EditorArea } from "@/components/editor/editor-area";
import { useOpenFiles } from "@/components/editor/use-open-files";
import { TreePanel } from "@/components/files/tree-panel";
import { useFileTree } from "@/components/files/use-file-tree";
import { Timeline } from "@/components/timeline/timeline";
import { TerminalPanel } from "@/components/terminal/terminal-panel";
import { ChangesView } from "@/components/review/changes-view";
import { CentreTabs } from "@/components/preview/centre-tabs";
import { PreviewPanel } from "@/components/preview/preview-panel";
import { useSessionAttention } from "@/components/attention/use-session-attention";
import { useFocusReport, usePushLanding } from "@/components/attention/use-push-landing";
import { modelTakesImages } from "./attachments";
import { Announcer } from "./announcer";
import { HooksTrust } from "./hooks-trust";
import { OpenFileContext } from "./open-file-context";
import { PromptInput } from "./prompt-input";
import { PaneBar, SessionHeader, type Pane, type SessionHeaderProps } from "./session-header";
import { canDrive, useAccess } from "@/components/shared/use-access";
import { Splitter } from "./splitter";
import { StatusBar } from "./status-bar";
import { Transcript } from "./transcript";
import { focusWaitingApproval, useIdeShortcuts } from "./use-ide-shortcuts";
import { useLayout } from "./use-layout";
import { useNarrow } from "./use-narrow";
import { useSession } from "./use-session";
import { useSessionSummary } from "./use-session-summary";

/** The session page: file tree | editor and diffs | agent, terminals below, status at the bottom. */
export function SessionView({ sessionId }: { sessionId: string }) {
  const { state, connection, error, presence, noteTyping } = useSession(sessionId);
  const { summary, loadError, defaultModel, settings } = useSessionSummary(sessionId);
  const { layout, update } = useLayout();
  const tree = useFileTree(sessionId);
  const files = useOpenFiles(sessionId);
  const narrow = useNarrow();
  const [pane, setPane] = useState<Pane>("agent");
  const [timelineOpen, setTimelineOpen] = useState(false);
  const [changesOpen, setChangesOpen] = useState(false);
  const [centre, setCentre] = useState<"editor" | "preview">("editor");
  const access = useAccess(sessionId);
  useSessionAttention(sessionId, state.title ?? summary?.title, () => setPane("agent"));
  useFocusReport(sessionId, connection === "live");
  usePushLanding(connection === "live");

  useEffect(() => {
    if (state.title) document.title = `${state.title} · Worldline`;
  }, [state.title]);

  const { onDiskChange } = files;
  useEffect(() => {
    if (tree.changed) void onDiskChange(tree.changed.paths);
    // Only a new change batch should trigger a check, not every buffer edit.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [tree.changed]);

  useIdeShortcuts({ layout, update, narrow, setPane, setChangesOpen, setTimelineOpen });

  if (loadError) {
    return (
      <div className="p-6 text-danger" data-testid="session-error">
        {loadError}
      </div>
    );
  }

  const openFile = (path: string, line?: number) => {
    files.openFile(path, line);
    if (narrow) setPane("editor");
  };
  const openDiff = (title: string, diff: string) => {
    files.openDiff(title, diff);
    if (narrow) setPane("editor");
  };
  const activeFile = files.tabs.find((t) => t.id === files.active);
  const agentView = (
    <>
      {error ? <div className="border-b border-border bg-danger/10 px-3 py-1 text-danger">{error}</div> : null}
      <HooksTrust sessionId={sessionId} running={state.running !== null} />
      <OpenFileContext.Provider value={openFile}>
        <Transcript state={state} onOpenDiff={openDiff} sessionId={sessionId} />
      </OpenFileContext.Provider>
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
    machine: summary ? (summary.runner ? `on runner ${summary.runner}` : "on this machine") : undefined,
    presence,
    running: state.running !== null,
    turnId: state.running?.turnId ?? null,
    // The log's totals and budget are live; the summary covers what the loaded log has not said.
    costUsd: state.usage?.cost ?? summary?.cost_usd ?? null,
    budgetUsd: state.budgetUsd !== undefined ? state.budgetUsd : (summary?.budget_usd ?? null),
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
      {/* Outside the panes: on a phone the agent pane comes and goes, the announcements must not. */}
      <Announcer state={state} live={connection === "live"} error={error} />
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
            <TreePanel
              tree={tree}
              style={narrow ? { flex: 1 } : { width: layout.treeWidth }}
              activePath={activeFile?.kind === "file" ? activeFile.path : null}
              onOpen={openFile}
            />
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
              <div className="flex min-h-0 flex-1 flex-col">
                <CentreTabs centre={centre} onCentre={setCentre} />
                <div className="min-h-0 flex-1">
                  {centre === "preview" ? (
                    <PreviewPanel sessionId={sessionId} canDrive={canDrive(access)} />
                  ) : changesOpen ? (
                    <ChangesView
                      sessionId={sessionId}
                      state={state}
                      ship={
                        summary?.worktree
                          ? { id: sessionId, title: state.title ?? summary.title, worktree: summary.worktree }
                          : null
                      }
                      onClose={() => setChangesOpen(false)}
                    />
                  ) : (
                    <EditorArea files={files} state={state} />
                  )}
                </div>
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
          setPane("agent");
          focusWaitingApproval();
        }}
      />
    </div>
  );
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
