"use client";

import { useEffect, type Dispatch, type SetStateAction } from "react";
import type { IdeLayout } from "@/server/protocol";
import { focusWhenReady } from "@/components/shared/focus";
import { isTerminalToggle } from "@/components/terminal/terminal-keys";
import type { Pane } from "./session-header";

/** Where session shortcuts put the keyboard. */
const PROMPT = '[data-testid="prompt-input"]';
const TERMINAL_INPUT = '[data-testid="terminal-view"][data-status="live"] .xterm-helper-textarea';
const TREE_ROW = '[role="tree"] [tabindex="0"], [data-testid="file-tree"]:not([role="tree"])';
const WAITING_APPROVAL = '[data-testid="tool-card"][data-state="waiting_approval"] [data-testid="approval-allow-once"]';

/** "N pending approvals" takes the keyboard to the first request's decision. */
export function focusWaitingApproval(): void {
  focusWhenReady(WAITING_APPROVAL);
}

/**
 * The session page's shortcuts (listed in components/shell/shortcuts.json): Ctrl+B tree, Ctrl+J terminal
 * panel, Ctrl+` into and out of the terminal, Ctrl+Shift+E/G/H focus the tree, Changes, timeline.
 */
export function useIdeShortcuts({
  layout,
  update,
  narrow,
  setPane,
  setChangesOpen,
  setTimelineOpen,
}: {
  layout: IdeLayout;
  update: (patch: Partial<IdeLayout>) => void;
  narrow: boolean;
  setPane: (pane: Pane) => void;
  setChangesOpen: Dispatch<SetStateAction<boolean>>;
  setTimelineOpen: Dispatch<SetStateAction<boolean>>;
}): void {
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
      } else if (isTerminalToggle(event)) {
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
  }, [layout.treeOpen, layout.bottomOpen, update, narrow, setPane, setChangesOpen, setTimelineOpen]);
}
