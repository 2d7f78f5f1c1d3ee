import { Change, type DiffConfig } from "@codemirror/merge";
import type { ReviewHunk } from "@/server/protocol";

/** Character offset where each line starts, plus the text's length for the line past the end. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  if (starts.at(-1) === text.length) starts.pop();
  starts.push(text.length);
  return starts;
}

/** Zero-based first line of a hunk side (the wire names the line before an empty side, as unified diffs do). */
const firstLine = (start: number, lines: number) => (lines > 0 ? start - 1 : start);

/**
 * The server's hunks as CodeMirror changes: the merge view draws exactly the hunks the list
 * below accepts and reverts (server/diff), instead of diffing the texts a second time.
 */
export function serverDiff(hunks: readonly ReviewHunk[]): DiffConfig {
  return {
    override: (a, b) => {
      const startsA = lineStarts(a);
      const startsB = lineStarts(b);
      const at = (starts: number[], line: number) => starts[Math.min(line, starts.length - 1)];
      return hunks.map((hunk) => {
        const oldFrom = firstLine(hunk.old_start, hunk.old_lines);
        const newFrom = firstLine(hunk.new_start, hunk.new_lines);
        return new Change(
          at(startsA, oldFrom),
          at(startsA, oldFrom + hunk.old_lines),
          at(startsB, newFrom),
          at(startsB, newFrom + hunk.new_lines),
        );
      });
    },
  };
}
