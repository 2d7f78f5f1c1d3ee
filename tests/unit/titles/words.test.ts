import { describe, expect, it } from "vitest";
import { cleanModelTitle, firstWordsTitle, TITLE_MAX_CHARS } from "../../../server/titles";

describe("firstWordsTitle", () => {
  it("keeps the first six words, capitalised, and marks the cut", () => {
    expect(firstWordsTitle("fix the failing login test when the cookie expires")).toBe(
      "Fix the failing login test when…",
    );
  });
  it("keeps a short prompt whole, without trailing punctuation", () => {
    expect(firstWordsTitle("  rename   utils.ts?  ")).toBe("Rename utils.ts");
  });
  it("leaves out pasted code blocks and gives up on an empty prompt", () => {
    expect(firstWordsTitle("why does this fail ```\nconst x = 1;\n``` here")).toBe("Why does this fail here");
    expect(firstWordsTitle("   ")).toBeNull();
  });
  it("cuts one very long word to the title length", () => {
    const title = firstWordsTitle("a".repeat(200))!;
    expect(title.length).toBe(TITLE_MAX_CHARS);
    expect(title.endsWith("…")).toBe(true);
  });
});

describe("cleanModelTitle", () => {
  it("takes the first line without label, quotes, markdown or full stop", () => {
    expect(cleanModelTitle('Title: "Fix login cookie expiry".\nBecause…')).toBe("Fix login cookie expiry");
    expect(cleanModelTitle("**Refactor the parser**")).toBe("Refactor the parser");
  });
  it("drops a reasoning block and says null when nothing is left", () => {
    expect(cleanModelTitle("<think>the user wants…</think>\nAdd dark mode")).toBe("Add dark mode");
    expect(cleanModelTitle("<think>unfinished")).toBeNull();
    expect(cleanModelTitle("  \n ")).toBeNull();
  });
});
