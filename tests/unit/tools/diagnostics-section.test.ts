import { describe, expect, it } from "vitest";
import { withDiagnostics } from "../../../server/tools/diagnostics-section";
import type { FileDiagnostic, ToolContext } from "../../../server/tools/types";

const file = { real: "/ws/src/a.ts", display: "src/a.ts" };
const applied = { isError: false, output: "Edited src/a.ts (1 edit applied).", display: { path: "src/a.ts" } };

function ctxWith(diagnose: ToolContext["diagnose"]): ToolContext {
  return {
    cwd: "/ws",
    signal: new AbortController().signal,
    sessionId: "s",
    toolCallId: "c",
    emit: () => {},
    diagnose,
  };
}

function errors(count: number): FileDiagnostic[] {
  return Array.from({ length: count }, (_, i) => ({
    line: i + 1,
    column: 3,
    message: `bad ${i + 1}`,
    source: "ts",
    code: "2322",
  }));
}

describe("an edit's diagnostics section", () => {
  it("sits apart from the edit's statement, at most 20 errors, and says the edit was applied", async () => {
    const result = await withDiagnostics(
      ctxWith(async () => errors(25)),
      file,
      "text",
      applied,
    );
    const [statement, blank, header, ...lines] = result.output.split("\n");
    expect(statement).toBe("Edited src/a.ts (1 edit applied).");
    expect(blank).toBe("");
    expect(header).toBe(
      "Diagnostics (not an edit failure; the edit above was applied): the language server reports 25 errors in src/a.ts now:",
    );
    expect(lines).toHaveLength(21);
    expect(lines[0]).toBe("src/a.ts:1:3: error ts2322: bad 1");
    expect(lines.at(-1)).toBe("… and 5 more");
    expect(result.isError).toBe(false);
    expect(result.display).toMatchObject({ path: "src/a.ts", diagnosticsTotal: 25 });
    expect((result.display?.diagnostics as unknown[]).length).toBe(20);
  });

  it("adds nothing for a clean file but records the empty list, and nothing at all without a server", async () => {
    const clean = await withDiagnostics(
      ctxWith(async () => []),
      file,
      "text",
      applied,
    );
    expect(clean.output).toBe(applied.output);
    expect(clean.display).toMatchObject({ diagnostics: [] });
    expect(
      await withDiagnostics(
        ctxWith(async () => undefined),
        file,
        "text",
        applied,
      ),
    ).toEqual(applied);
    expect(
      await withDiagnostics(
        ctxWith(() => Promise.reject(new Error("gone"))),
        file,
        "text",
        applied,
      ),
    ).toEqual(applied);
  });
});
