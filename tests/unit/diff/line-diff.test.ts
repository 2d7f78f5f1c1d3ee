import { describe, expect, it } from "vitest";
import { lineCounts, lineHunks, revertHunk, unifiedDiff } from "../../../server/diff";

const text = (...lines: string[]) => lines.map((line) => `${line}\n`).join("");

describe("lineHunks", () => {
  it("splits separate edits into separate hunks, each revertible alone", () => {
    const before = text("a", "b", "c", "d", "e", "f");
    const after = text("a", "B", "c", "d", "e", "f", "g");
    const hunks = lineHunks(before, after);
    expect(hunks.map((h) => [h.oldFrom, h.oldTo, h.newFrom, h.newTo])).toEqual([
      [1, 2, 1, 2],
      [6, 6, 6, 7],
    ]);
    expect(hunks[0]).toMatchObject({ oldText: "b\n", newText: "B\n" });
    expect(revertHunk(after, hunks[0])).toBe(text("a", "b", "c", "d", "e", "f", "g"));
    expect(revertHunk(after, hunks[1])).toBe(text("a", "B", "c", "d", "e", "f"));
  });

  it("keeps ids stable when other lines move, and tells repeated hunks apart", () => {
    const first = lineHunks(text("x", "y"), text("x", "Y"));
    const shifted = lineHunks(text("0", "x", "y"), text("new", "0", "x", "Y"));
    expect(shifted.map((h) => h.id)).toContain(first[0].id);
    const repeated = lineHunks(text("a", "k", "a"), text("b", "k", "b"));
    expect(new Set(repeated.map((h) => h.id)).size).toBe(2);
  });

  it("handles added and deleted files, missing final newlines and identical texts", () => {
    expect(lineHunks("", text("new"))).toMatchObject([{ oldFrom: 0, oldTo: 0, newFrom: 0, newTo: 1 }]);
    expect(lineHunks(text("gone"), "")).toMatchObject([{ oldText: "gone\n", newText: "" }]);
    const hunks = lineHunks("a\nb", "a\nc");
    expect(revertHunk("a\nc", hunks[0])).toBe("a\nb");
    expect(lineHunks(text("same"), text("same"))).toEqual([]);
  });

  it("reverting every hunk in any order gives the old text back", () => {
    const before = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join("");
    const lines = before.split(/(?<=\n)/);
    lines[10] = "changed 10\n";
    lines.splice(50, 3);
    lines.splice(120, 0, "inserted\n", "inserted too\n");
    const after = lines.join("");
    let current = after;
    // Revert from the last hunk backwards so earlier line numbers stay valid, recomputing each time like the UI does.
    for (let guard = 0; guard < 10; guard++) {
      const hunks = lineHunks(before, current);
      if (hunks.length === 0) break;
      current = revertHunk(current, hunks[Math.floor(hunks.length / 2)]);
    }
    expect(current).toBe(before);
  });
});

describe("one diff for cards, hunks and counts", () => {
  it("counts, hunks and the unified diff describe the same lines", () => {
    const before = Array.from({ length: 60 }, (_, i) => `line ${i}\n`).join("");
    const lines = before.split(/(?<=\n)/);
    lines[5] = "five\n";
    lines.splice(30, 2, "a\n", "b\n", "c\n");
    lines.splice(50, 1);
    const after = lines.join("");
    const hunks = lineHunks(before, after);
    const counted = { additions: 0, deletions: 0 };
    for (const hunk of hunks) {
      counted.additions += hunk.newTo - hunk.newFrom;
      counted.deletions += hunk.oldTo - hunk.oldFrom;
    }
    expect(lineCounts(before, after)).toEqual(counted);
    expect(counted).toEqual({ additions: 4, deletions: 4 });
    const patch = unifiedDiff("f", before, after);
    expect(patch.match(/^\+(?!\+\+)/gm)).toHaveLength(counted.additions);
    expect(patch.match(/^-(?!--)/gm)).toHaveLength(counted.deletions);
  });

  it("tells a missing final newline from a present one", () => {
    expect(lineCounts("a\nb", "a\nb\n")).toEqual({ additions: 1, deletions: 1 });
  });
});
