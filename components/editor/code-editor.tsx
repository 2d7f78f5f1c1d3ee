"use client";

import { css } from "@codemirror/lang-css";
import { html } from "@codemirror/lang-html";
import { javascript } from "@codemirror/lang-javascript";
import { json } from "@codemirror/lang-json";
import { markdown } from "@codemirror/lang-markdown";
import { python } from "@codemirror/lang-python";
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorState, type Extension } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { lintGutter, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import type { FileDiagnosticView } from "@/server/protocol";
import { tags } from "@lezer/highlight";
import { basicSetup } from "codemirror";
import { useEffect, useRef } from "react";

/** Colours from the app's CSS variables, so the editor follows the dark/light theme. */
export const editorTheme = EditorView.theme({
  "&": { height: "100%", backgroundColor: "var(--wl-bg)", color: "var(--wl-fg)", fontSize: "12.5px" },
  ".cm-content": { fontFamily: "var(--font-mono)", caretColor: "var(--wl-accent)" },
  // CodeMirror draws no ring of its own: the app's focus outline, inside the pane's edge.
  ".cm-content:focus-visible": { outline: "2px solid var(--wl-accent)", outlineOffset: "-2px" },
  ".cm-gutters": {
    backgroundColor: "var(--wl-panel)",
    color: "var(--wl-muted)",
    borderRight: "1px solid var(--wl-border)",
  },
  ".cm-activeLine": { backgroundColor: "color-mix(in srgb, var(--wl-raised) 60%, transparent)" },
  ".cm-activeLineGutter": { backgroundColor: "var(--wl-raised)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "color-mix(in srgb, var(--wl-accent) 30%, transparent)",
  },
  ".cm-cursor": { borderLeftColor: "var(--wl-accent)" },
  ".cm-panels": { backgroundColor: "var(--wl-panel)", color: "var(--wl-fg)" },
  ".cm-scroller": { overflow: "auto" },
});

export const editorHighlight = HighlightStyle.define([
  { tag: [tags.keyword, tags.operatorKeyword, tags.modifier], color: "var(--wl-syn-keyword)" },
  { tag: [tags.string, tags.special(tags.string)], color: "var(--wl-syn-string)" },
  { tag: [tags.number, tags.bool, tags.null], color: "var(--wl-syn-number)" },
  { tag: [tags.comment], color: "var(--wl-muted)", fontStyle: "italic" },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: "var(--wl-syn-function)" },
  { tag: [tags.typeName, tags.className], color: "var(--wl-syn-type)" },
  { tag: [tags.propertyName, tags.attributeName], color: "var(--wl-syn-property)" },
  { tag: [tags.heading], color: "var(--wl-accent)", fontWeight: "bold" },
  { tag: [tags.tagName], color: "var(--wl-syn-tag)" },
]);

export function languageFor(path: string): Extension {
  const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
  if (["ts", "tsx", "mts", "cts"].includes(ext)) return javascript({ typescript: true, jsx: ext === "tsx" });
  if (["js", "jsx", "mjs", "cjs"].includes(ext)) return javascript({ jsx: ext === "jsx" });
  if (ext === "json") return json();
  if (["md", "markdown"].includes(ext)) return markdown();
  if (ext === "py") return python();
  if (["css", "scss"].includes(ext)) return css();
  if (["html", "htm", "svg", "xml"].includes(ext)) return html();
  return [];
}

/**
 * CodeMirror 6 on one document. The parent owns the text: `value` replaces the
 * document when it differs from what the editor holds (a reload from disk).
 */
export function CodeEditor({
  path,
  value,
  onChange,
  onSave,
  diagnostics = [],
  revealLine,
}: {
  path: string;
  value: string;
  onChange: (text: string) => void;
  onSave: () => void;
  /** A language server's errors in the file, drawn as squiggles (server/diagnostics). */
  diagnostics?: FileDiagnosticView[];
  /** A line to scroll to and put the cursor on (with a stamp, so the same line can be asked again). */
  revealLine?: { line: number; at: number };
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const handlers = useRef({ onChange, onSave });
  handlers.current = { onChange, onSave };

  useEffect(() => {
    if (!host.current) return;
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          keymap.of([{ key: "Mod-s", preventDefault: true, run: () => (handlers.current.onSave(), true) }]),
          basicSetup,
          editorTheme,
          syntaxHighlighting(editorHighlight),
          languageFor(path),
          lintGutter(),
          EditorView.contentAttributes.of({ "aria-label": `Edit ${path}` }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) handlers.current.onChange(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = editor;
    return () => editor.destroy();
    // The editor is rebuilt only for another file; text updates go through the effect below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [path]);

  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    const editor = view.current;
    if (editor) editor.dispatch(setDiagnostics(editor.state, toCodeMirror(editor.state, diagnostics)));
  }, [diagnostics, value]);

  useEffect(() => {
    const editor = view.current;
    if (!editor || !revealLine) return;
    const line = editor.state.doc.line(Math.min(Math.max(1, revealLine.line), editor.state.doc.lines));
    editor.dispatch({
      selection: { anchor: line.from },
      effects: EditorView.scrollIntoView(line.from, { y: "center" }),
    });
    editor.focus();
  }, [revealLine]);

  return <div ref={host} className="h-full min-h-0 overflow-hidden" data-testid="code-editor" data-path={path} />;
}

/** Line/column diagnostics (from 1) as CodeMirror ranges: from the column to the end of its word, within the document. */
function toCodeMirror(state: EditorState, diagnostics: FileDiagnosticView[]): Diagnostic[] {
  return diagnostics.flatMap((diagnostic) => {
    if (diagnostic.line > state.doc.lines) return [];
    const line = state.doc.line(diagnostic.line);
    const from = Math.min(line.from + diagnostic.column - 1, line.to);
    const word = /^\w+/.exec(state.doc.sliceString(from, line.to))?.[0].length ?? 0;
    return [
      {
        from,
        to: Math.max(from + word, Math.min(from + 1, line.to)),
        severity: "error" as const,
        message: diagnostic.message,
        source: diagnostic.source,
      },
    ];
  });
}
