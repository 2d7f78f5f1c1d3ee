import { createHash } from "node:crypto";
import { diffLines } from "diff";

/**
 * The one line diff of the server (jsdiff's Myers diff on lines). Approval cards
 * (`unifiedDiff`), the Changes view's hunks (`lineHunks`) and the timeline's line counts
 * (`lineCounts`) all come from `lineRuns`, so they agree on what changed and where; the UI
 * draws these hunks and computes none of its own.
 */

/** Past this many edits the two sides are shown as one replacement (the diff's work grows with edits²). */
const MAX_EDIT_LENGTH = 4_000;

/** Lines of unchanged context around each change in a unified diff, as `diff -u`. */
const CONTEXT_LINES = 3;

/** A run of lines that is the same on both sides, or only removed, or only added. */
interface LineRun {
  kind: " " | "-" | "+";
  /** Lines with their terminators, so joining them gives the text back byte for byte. */
  lines: string[];
}

export interface LineHunk {
  /** Stable while the hunk's text is unchanged: a hash of its old and new lines (plus a counter for repeats). */
  id: string;
  /** Zero-based line range in the old text, end exclusive. */
  oldFrom: number;
  oldTo: number;
  /** Zero-based line range in the new text, end exclusive. */
  newFrom: number;
  newTo: number;
  oldText: string;
  newText: string;
}

/** Lines with their terminators, so joining them gives the text back byte for byte. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  return text.split(/(?<=\n)/);
}

function lineRuns(before: string, after: string): LineRun[] {
  const changes = diffLines(before, after, { maxEditLength: MAX_EDIT_LENGTH });
  if (!changes) {
    return [
      { kind: "-", lines: splitLines(before) },
      { kind: "+", lines: splitLines(after) },
    ].filter((run) => run.lines.length > 0) as LineRun[];
  }
  return changes.map((change) => ({
    kind: change.added ? "+" : change.removed ? "-" : " ",
    lines: splitLines(change.value),
  }));
}

/** Lines added and deleted, as `git diff --numstat` counts them. */
export function lineCounts(before: string, after: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (const run of lineRuns(before, after)) {
    if (run.kind === "+") additions += run.lines.length;
    if (run.kind === "-") deletions += run.lines.length;
  }
  return { additions, deletions };
}

/**
 * Line hunks for reviewing a file change by change: a hunk is one contiguous run of changed
 * lines (no context lines), so two edits three lines apart can be accepted or reverted separately.
 */
export function lineHunks(before: string, after: string): LineHunk[] {
  const hunks: Omit<LineHunk, "id">[] = [];
  let oldLine = 0;
  let newLine = 0;
  let open: Omit<LineHunk, "id"> | undefined;
  for (const run of lineRuns(before, after)) {
    const text = run.lines.join("");
    if (run.kind === " ") {
      open = undefined;
      oldLine += run.lines.length;
      newLine += run.lines.length;
      continue;
    }
    if (!open) {
      open = { oldFrom: oldLine, oldTo: oldLine, newFrom: newLine, newTo: newLine, oldText: "", newText: "" };
      hunks.push(open);
    }
    if (run.kind === "-") {
      oldLine += run.lines.length;
      open.oldTo = oldLine;
      open.oldText += text;
    } else {
      newLine += run.lines.length;
      open.newTo = newLine;
      open.newText += text;
    }
  }
  const seen = new Map<string, number>();
  return hunks.map((hunk) => {
    const digest = createHash("sha256")
      .update(hunk.oldText)
      .update("\0")
      .update(hunk.newText)
      .digest("hex")
      .slice(0, 16);
    const repeat = seen.get(digest) ?? 0;
    seen.set(digest, repeat + 1);
    return { id: repeat === 0 ? digest : `${digest}-${repeat}`, ...hunk };
  });
}

/** The new text with one hunk put back as it was in the old text. */
export function revertHunk(newText: string, hunk: LineHunk): string {
  const lines = splitLines(newText);
  return [...lines.slice(0, hunk.newFrom), hunk.oldText, ...lines.slice(hunk.newTo)].join("");
}

type Op = { kind: LineRun["kind"]; line: string };

/** A unified diff (`diff -u` with a/ and b/ names) of one file, for approval cards. */
export function unifiedDiff(fileName: string, before: string, after: string): string {
  if (before === after) return "";
  const ops: Op[] = lineRuns(before, after).flatMap((run) =>
    run.lines.map((line) => ({ kind: run.kind, line: line.endsWith("\n") ? line.slice(0, -1) : line })),
  );
  const header = `--- ${before === "" ? "/dev/null" : `a/${fileName}`}\n+++ b/${fileName}\n`;
  return header + unifiedHunks(ops).join("");
}

function unifiedHunks(ops: Op[]): string[] {
  const changed = ops.map((op, index) => (op.kind === " " ? -1 : index)).filter((index) => index >= 0);
  const result: string[] = [];
  let cursor = 0;
  while (cursor < changed.length) {
    const first = changed[cursor];
    let last = first;
    // Merge changes whose context would overlap into one hunk.
    while (cursor + 1 < changed.length && changed[cursor + 1] - last <= CONTEXT_LINES * 2 + 1) last = changed[++cursor];
    cursor++;
    const from = Math.max(0, first - CONTEXT_LINES);
    const to = Math.min(ops.length, last + CONTEXT_LINES + 1);
    result.push(formatHunk(ops, from, to));
  }
  return result;
}

function formatHunk(ops: Op[], from: number, to: number): string {
  let oldStart = 1;
  let newStart = 1;
  for (let k = 0; k < from; k++) {
    if (ops[k].kind !== "+") oldStart++;
    if (ops[k].kind !== "-") newStart++;
  }
  const slice = ops.slice(from, to);
  const oldCount = slice.filter((op) => op.kind !== "+").length;
  const newCount = slice.filter((op) => op.kind !== "-").length;
  const range = (start: number, count: number) => `${count === 0 ? start - 1 : start},${count}`;
  const body = slice.map((op) => `${op.kind}${op.line}\n`).join("");
  return `@@ -${range(oldStart, oldCount)} +${range(newStart, newCount)} @@\n${body}`;
}
