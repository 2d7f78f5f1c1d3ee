import { createHash } from "node:crypto";

/**
 * Line hunks between two texts, for reviewing a file change by change: a hunk is one
 * contiguous run of changed lines (no context lines), so two edits three lines apart can be
 * accepted or reverted separately. Pure; the diff is Myers' O(ND) algorithm on lines, with
 * the common head and tail trimmed first.
 */

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

/** Past this many edits the two sides are treated as one change (Myers' trace grows with D²). */
const MAX_EDIT_DISTANCE = 4_000;

/** Lines with their terminators, so joining them gives the text back byte for byte. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  return text.split(/(?<=\n)/);
}

export function lineHunks(oldText: string, newText: string): LineHunk[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const seen = new Map<string, number>();
  return changedRanges(a, b).map(([oldFrom, oldTo, newFrom, newTo]) => {
    const removed = a.slice(oldFrom, oldTo).join("");
    const added = b.slice(newFrom, newTo).join("");
    const digest = createHash("sha256").update(removed).update("\0").update(added).digest("hex").slice(0, 16);
    const repeat = seen.get(digest) ?? 0;
    seen.set(digest, repeat + 1);
    return {
      id: repeat === 0 ? digest : `${digest}-${repeat}`,
      oldFrom,
      oldTo,
      newFrom,
      newTo,
      oldText: removed,
      newText: added,
    };
  });
}

/** The new text with one hunk put back as it was in the old text. */
export function revertHunk(newText: string, hunk: LineHunk): string {
  const lines = splitLines(newText);
  return [...lines.slice(0, hunk.newFrom), hunk.oldText, ...lines.slice(hunk.newTo)].join("");
}

type Range = [oldFrom: number, oldTo: number, newFrom: number, newTo: number];

function changedRanges(a: readonly string[], b: readonly string[]): Range[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let endA = a.length;
  let endB = b.length;
  while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  if (head === endA && head === endB) return [];
  const matches = myersMatches(a.slice(head, endA), b.slice(head, endB));
  if (!matches) return [[head, endA, head, endB]];
  const ranges: Range[] = [];
  let x = 0;
  let y = 0;
  for (const [mx, my] of [...matches, [endA - head, endB - head] as const]) {
    if (mx > x || my > y) ranges.push([head + x, head + mx, head + y, head + my]);
    x = mx + 1;
    y = my + 1;
  }
  return ranges;
}

/** Matched line pairs (index in a, index in b) in order, or undefined past MAX_EDIT_DISTANCE. */
function myersMatches(a: readonly string[], b: readonly string[]): [number, number][] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, offset, n, m);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], offset: number, n: number, m: number): [number, number][] {
  const matches: [number, number][] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = v[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      matches.push([x, y]);
    }
    x = prevX;
    y = prevY;
  }
  return matches.reverse();
}
