"use client";

import { formatSpend, type IdeLayout, type PresenceState } from "@/server/protocol";
import { AttentionMenu } from "@/components/attention/attention-menu";
import { MoonIcon, SunIcon } from "@/components/shared/icons";
import { McpStatus } from "./mcp-status";
import { PresenceBar } from "./presence-bar";
import { SessionTitle } from "./session-title";
import { ShareDialog } from "./share-dialog";

export type Pane = "agent" | "files" | "editor" | "terminal";
export const PANES: Pane[] = ["agent", "files", "editor", "terminal"];

/** Below 768 px (Tailwind's `md`) every control is at least 44 px square: a thumb's target (WCAG 2.5.5). */
const TOUCH = "max-md:min-h-[44px] max-md:min-w-[44px]";

/** The panels a wide header shows or hides, with their shortcuts (components/shell/shortcuts.json lists them too). */
const PANEL_TOGGLES = [
  { key: "treeOpen", label: "Files", shortcut: "Ctrl+B", testId: "toggle-tree" },
  { key: "bottomOpen", label: "Terminal", shortcut: "Ctrl+J", testId: "toggle-terminal" },
] as const;

export interface SessionHeaderProps {
  sessionId: string;
  title: string | undefined;
  workspace: string | undefined;
  /** Where the session's tools and files are ("on this machine", "on runner X"); undefined until loaded. */
  machine: string | undefined;
  presence: PresenceState | null;
  running: boolean;
  turnId: string | null;
  /** What the session's turns cost so far, and its budget (null = none: the status bar shows the cost alone). */
  costUsd: number | null;
  budgetUsd: number | null;
  noteTyping: () => void;
  narrow: boolean;
  layout: IdeLayout;
  update: (patch: Partial<IdeLayout>) => void;
  changesOpen: boolean;
  onToggleChanges: () => void;
  timelineOpen: boolean;
  onToggleTimeline: () => void;
}

/**
 * The session's header. On a phone it keeps only what fits one row of 44 px targets (title,
 * viewers, share, bell, theme); Changes and Timeline move to the pane bar below it.
 */
export function SessionHeader(props: SessionHeaderProps) {
  const { sessionId, narrow, layout, update } = props;
  const light = layout.theme === "light";
  return (
    <header
      className="flex h-8 shrink-0 items-center gap-2 border-b border-border px-3 text-muted max-md:h-[48px] max-md:gap-1 max-md:px-1"
      data-testid="session-header"
    >
      <SessionTitle sessionId={sessionId} title={props.title} />
      <span className="hidden truncate font-mono text-xs sm:inline" title={props.workspace}>
        {props.workspace}
      </span>
      <span className="shrink-0 text-xs" data-testid="session-machine" title="Where the session's tools and files are">
        {props.machine}
      </span>
      {props.budgetUsd !== null ? (
        <span
          className="shrink-0 text-xs tabular-nums"
          title="Spent of this session's budget (allowing past it raises the budget by its size)"
          data-testid="session-budget"
        >
          <span className="sr-only">Budget: </span>
          {formatSpend(props.costUsd, props.budgetUsd)}
        </span>
      ) : null}
      <span className="ml-auto flex shrink-0 items-center gap-1 text-xs">
        <PresenceBar presence={props.presence} running={props.running} noteTyping={props.noteTyping} />
        <McpStatus sessionId={sessionId} refreshKey={props.turnId} />
        <ShareDialog sessionId={sessionId} />
        <AttentionMenu sessionId={sessionId} />
        {!narrow ? (
          <>
            {PANEL_TOGGLES.map(({ key, label, shortcut, testId }) => (
              <ToggleButton
                key={key}
                on={layout[key]}
                onClick={() => update({ [key]: !layout[key] })}
                label={label}
                shortcut={shortcut}
                testId={testId}
              />
            ))}
            <ReviewToggles {...props} />
          </>
        ) : null}
        <button
          type="button"
          className={`flex items-center justify-center gap-1 rounded px-2 py-0.5 hover:bg-raised hover:text-fg ${TOUCH}`}
          onClick={() => update({ theme: light ? "dark" : "light" })}
          data-testid="toggle-theme"
          aria-label={light ? "Switch to the dark theme" : "Switch to the light theme"}
          title={light ? "Dark theme" : "Light theme"}
        >
          {light ? <MoonIcon /> : <SunIcon />}
          {narrow ? null : <span aria-hidden>{light ? "Dark" : "Light"}</span>}
        </button>
      </span>
    </header>
  );
}

/** Changes and Timeline: in the header on a wide screen, in the pane bar on a phone. */
function ReviewToggles({ changesOpen, onToggleChanges, timelineOpen, onToggleTimeline, narrow }: SessionHeaderProps) {
  const style = (on: boolean) =>
    narrow
      ? `flex-1 min-h-[44px] ${on ? "border-b-2 border-accent text-fg" : "text-muted"}`
      : `rounded px-2 py-0.5 hover:bg-raised ${on ? "text-fg" : ""}`;
  const toggles = [
    {
      label: "Changes",
      on: changesOpen,
      toggle: onToggleChanges,
      title: "Review what the session changed: accept or revert per hunk and file (Ctrl+Shift+G)",
    },
    {
      label: "Timeline",
      on: timelineOpen,
      toggle: onToggleTimeline,
      title: "Checkpoints: rewind, undo, fork (Ctrl+Shift+H)",
    },
  ];
  return (
    <>
      {toggles.map(({ label, on, toggle, title }) => (
        <button
          key={label}
          type="button"
          aria-pressed={on}
          onClick={toggle}
          className={style(on)}
          title={title}
          data-testid={`toggle-${label.toLowerCase()}`}
        >
          {label}
        </button>
      ))}
    </>
  );
}

/** The phone's pane bar: one pane at a time, plus the review toggles. */
export function PaneBar({
  pane,
  onPane,
  approvalsWaiting,
  header,
}: {
  pane: Pane;
  onPane: (pane: Pane) => void;
  approvalsWaiting: boolean;
  header: SessionHeaderProps;
}) {
  return (
    <nav className="flex shrink-0 border-b border-border text-xs" aria-label="Panes" data-testid="pane-tabs">
      {PANES.map((p) => (
        <button
          key={p}
          type="button"
          aria-pressed={pane === p}
          onClick={() => onPane(p)}
          className={`min-h-[44px] flex-1 capitalize ${pane === p ? "border-b-2 border-accent text-fg" : "text-muted"}`}
          data-testid={`pane-${p}`}
        >
          {p}
          {p === "agent" && approvalsWaiting ? (
            <>
              <span className="ml-1 text-warn" aria-hidden>
                ●
              </span>
              <span className="sr-only">, approval waiting</span>
            </>
          ) : null}
        </button>
      ))}
      <ReviewToggles {...header} />
    </nav>
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
      aria-keyshortcuts={shortcut.replace("Ctrl", "Control")}
      data-testid={testId}
    >
      {label} <kbd className="text-[10px] text-muted">{shortcut}</kbd>
    </button>
  );
}
