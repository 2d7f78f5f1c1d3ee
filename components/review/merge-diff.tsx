"use client";

import { syntaxHighlighting } from "@codemirror/language";
import { MergeView, unifiedMergeView } from "@codemirror/merge";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView, lineNumbers } from "@codemirror/view";
import { useEffect, useRef } from "react";
import { editorHighlight, editorTheme, languageFor } from "@/components/editor/code-editor";
import type { ReviewHunk } from "@/server/protocol";
import { serverDiff } from "./server-diff";

export type DiffLayout = "split" | "inline";

/** Unchanged runs longer than this fold away, keeping this many lines of context around each change. */
const COLLAPSE = { margin: 3, minSize: 6 };

/** Change colours that read on both the dark and the light theme. */
const mergeTheme = EditorView.theme({
  "&.cm-merge-a .cm-changedLine, .cm-deletedChunk": {
    backgroundColor: "color-mix(in srgb, var(--wl-danger) 14%, transparent)",
  },
  "&.cm-merge-b .cm-changedLine, .cm-inlineChangedLine": {
    backgroundColor: "color-mix(in srgb, var(--wl-ok) 14%, transparent)",
  },
  "&.cm-merge-a .cm-changedText, & .cm-deletedChunk .cm-deletedText": {
    background: "color-mix(in srgb, var(--wl-danger) 32%, transparent)",
  },
  "&.cm-merge-b .cm-changedText, & .cm-changedText": {
    background: "color-mix(in srgb, var(--wl-ok) 32%, transparent)",
  },
  "& .cm-collapsedLines": { background: "var(--wl-panel)", color: "var(--wl-muted)" },
});

function readOnly(path: string, label: string): Extension {
  return [
    EditorView.contentAttributes.of({ "aria-label": label }),
    lineNumbers(),
    editorTheme,
    mergeTheme,
    syntaxHighlighting(editorHighlight),
    languageFor(path),
    EditorState.readOnly.of(true),
    EditorView.editable.of(false),
  ];
}

/**
 * A read-only diff of one file with @codemirror/merge: side by side (`MergeView`, base on the
 * left) or inline (`unifiedMergeView`: deletions shown above the new lines). It renders the
 * server's hunks (`serverDiff`); accepting and reverting go through the server (hunk list), so
 * the editors never change the file themselves. Changes are marked by line: the server's
 * hunks are line ranges, so there is no word-level highlight to draw.
 */
export function MergeDiff({
  path,
  oldText,
  newText,
  hunks,
  layout,
}: {
  path: string;
  oldText: string;
  newText: string;
  hunks: readonly ReviewHunk[];
  layout: DiffLayout;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const parent = host.current;
    if (!parent) return;
    if (layout === "split") {
      const view = new MergeView({
        parent,
        a: { doc: oldText, extensions: readOnly(path, `${path} before the session`) },
        b: { doc: newText, extensions: readOnly(path, `${path} now`) },
        collapseUnchanged: COLLAPSE,
        gutter: true,
        highlightChanges: false,
        diffConfig: serverDiff(hunks),
      });
      return () => view.destroy();
    }
    const view = new EditorView({
      parent,
      state: EditorState.create({
        doc: newText,
        extensions: [
          readOnly(path, `Changes to ${path}`),
          unifiedMergeView({
            original: oldText,
            mergeControls: false,
            gutter: true,
            highlightChanges: false,
            collapseUnchanged: COLLAPSE,
            diffConfig: serverDiff(hunks),
          }),
        ],
      }),
    });
    return () => view.destroy();
  }, [path, oldText, newText, hunks, layout]);
  return <div ref={host} className="min-h-0 overflow-auto" data-testid={`merge-${layout}`} data-path={path} />;
}
