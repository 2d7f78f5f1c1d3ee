import { describe, expect, it } from "vitest";
import { serverDiff } from "../../../components/review/server-diff";
import { lineHunks } from "../../../server/diff";
import type { ReviewHunk } from "../../../server/protocol";

/** The wire form server/checkpoints/review.ts sends: one-based starts, an empty side names the line before. */
function onWire(before: string, after: string): ReviewHunk[] {
  return lineHunks(before, after).map((hunk) => ({
    id: hunk.id,
    old_start: hunk.oldTo > hunk.oldFrom ? hunk.oldFrom + 1 : hunk.oldFrom,
    old_lines: hunk.oldTo - hunk.oldFrom,
    new_start: hunk.newTo > hunk.newFrom ? hunk.newFrom + 1 : hunk.newFrom,
    new_lines: hunk.newTo - hunk.newFrom,
    old_text: hunk.oldText,
    new_text: hunk.newText,
    accepted: false,
  }));
}

describe("serverDiff (the merge view draws the server's hunks)", () => {
  const cases: [string, string, string][] = [
    ["an edit, an insertion and a deletion", "a\nb\nc\nd\ne\nf\ng\n", "a\nB\nc\nd\nnew\ne\ng\n"],
    ["an added file", "", "one\ntwo\n"],
    ["a deleted file", "one\ntwo\n", ""],
    ["a last line without a newline", "x\ny", "x\nz"],
    ["an insertion at the top and the end", "m\n", "top\nm\nend\n"],
  ];
  it.each(cases)("maps each hunk to exactly its lines: %s", (_name, before, after) => {
    const hunks = onWire(before, after);
    const changes = serverDiff(hunks).override?.(before, after) ?? [];
    expect(changes).toHaveLength(hunks.length);
    changes.forEach((change, index) => {
      expect(before.slice(change.fromA, change.toA)).toBe(hunks[index].old_text);
      expect(after.slice(change.fromB, change.toB)).toBe(hunks[index].new_text);
    });
  });
});
