import { describe, expect, it } from "vitest";
import { fuzzyFilter, fuzzyScore, parsePorcelain } from "../../../server/files";

describe("fuzzy file search", () => {
  it("ranks a file-name prefix above a scattered match", () => {
    expect(fuzzyFilter("app", ["lib/a-p-p.ts", "src/app.ts", "zapp/readme.md"], 3)[0]).toBe("src/app.ts");
  });
  it("rejects candidates that don't contain the query as a subsequence", () => {
    expect(fuzzyScore("xyz", "src/app.ts")).toBe(-1);
  });
  it("caps the number of results", () => {
    expect(
      fuzzyFilter(
        "a",
        Array.from({ length: 100 }, (_, i) => `a${i}.ts`),
        5,
      ),
    ).toHaveLength(5);
  });
});

describe("git porcelain markers", () => {
  it("maps codes and strips the workspace prefix of a subfolder", () => {
    const out = [" M sub/a.ts", "?? sub/new.ts", "R  sub/b.ts", "sub/old-b.ts", "A  other/c.ts", ""].join("\0");
    expect(parsePorcelain(out, "sub/")).toEqual({ "a.ts": "M", "new.ts": "U", "b.ts": "R" });
  });
});
