/**
 * A small unified diff for approval cards (the `diff` package is not a
 * dependency). Lines common to both ends are trimmed first, the middle is
 * diffed by LCS when small enough and shown as a whole replacement otherwise.
 */

/** Lines of unchanged context around each change, as `diff -u`. */
const CONTEXT_LINES = 3;

/** Above this many LCS cells (old × new middle lines) the middle is shown as replaced wholesale. */
const MAX_LCS_CELLS = 4_000_000;

type Op = { kind: " " | "-" | "+"; line: string };

export function unifiedDiff(fileName: string, before: string, after: string): string {
  if (before === after) return "";
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = diffLines(a, b);
  const header = `--- ${before === "" ? "/dev/null" : `a/${fileName}`}\n+++ b/${fileName}\n`;
  return header + hunks(ops).join("");
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

function diffLines(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const head: Op[] = a.slice(0, start).map((line) => ({ kind: " ", line }));
  const tail: Op[] = a.slice(endA).map((line) => ({ kind: " ", line }));
  return [...head, ...diffMiddle(a.slice(start, endA), b.slice(start, endB)), ...tail];
}

function diffMiddle(a: string[], b: string[]): Op[] {
  if (a.length * b.length > MAX_LCS_CELLS || a.length === 0 || b.length === 0) {
    return [...a.map((line): Op => ({ kind: "-", line })), ...b.map((line): Op => ({ kind: "+", line }))];
  }
  // lengths[i][j] = LCS length of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? lengths[(i + 1) * width + j + 1] + 1
          : Math.max(lengths[(i + 1) * width + j], lengths[i * width + j + 1]);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      ops.push({ kind: " ", line: a[i++] });
      j++;
    } else if (lengths[(i + 1) * width + j] >= lengths[i * width + j + 1]) {
      ops.push({ kind: "-", line: a[i++] });
    } else {
      ops.push({ kind: "+", line: b[j++] });
    }
  }
  while (i < a.length) ops.push({ kind: "-", line: a[i++] });
  while (j < b.length) ops.push({ kind: "+", line: b[j++] });
  return ops;
}

function hunks(ops: Op[]): string[] {
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
