import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope, FileDiagnostics, LanguageServerStatus } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { waitFor } from "../helpers";
import { plainMessages, startAgentBridge, type AgentBridge } from "../agent/harness";

let fake: FakeLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url);
  await fs.writeFile(
    path.join(bridge.workspace, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true } }),
  );
  await fs.writeFile(path.join(bridge.workspace, "count.ts"), "export const count: number = 1;\n");
});
afterAll(async () => {
  await bridge.close();
  await fake.close();
});
afterEach(() => fake.reset());

function lastToolOutput(request: FakeLlm["requests"][number]): string {
  return String(
    plainMessages(request)
      .filter((message) => message.role === "tool")
      .at(-1)?.content,
  ).trim();
}

function toolDisplays(events: EventEnvelope[]): Record<string, unknown>[] {
  return events.flatMap((event) =>
    event.type === "tool.state" && event.payload.display ? [event.payload.display as Record<string, unknown>] : [],
  );
}

/** A cold TypeScript server takes longer than an edit waits (2 s); the test waits for it to be warm once. */
async function warmUp(sessionId: string): Promise<void> {
  fake.script(
    {
      toolCalls: [
        { name: "write_file", arguments: { path: "count.ts", content: "export const count: number = 1;\n" } },
      ],
    },
    { text: "ok" },
  );
  await bridge.chat(sessionId, "warm up");
  await waitFor(
    async () => {
      const response = await bridge.api(`/api/v1/sessions/${sessionId}/diagnostics?path=count.ts`);
      const body = (await response.json()) as FileDiagnostics;
      return body.diagnostics !== null ? body : undefined;
    },
    120_000,
    "the TypeScript server's first diagnostics",
  );
  fake.reset();
}

describe("language-server diagnostics after edits", () => {
  it("an edit that introduces a type error returns it, apart from the edit's result; the fix returns none", async () => {
    const sessionId = await bridge.createSession();
    await warmUp(sessionId);
    fake.script(
      {
        toolCalls: [
          {
            name: "str_replace",
            arguments: { path: "count.ts", edits: [{ old_text: "= 1;", new_text: '= "one";' }] },
          },
        ],
      },
      { text: "oops" },
    );
    await bridge.chat(sessionId, "break it");
    const broken = lastToolOutput(fake.requests[1]);
    expect(broken).toMatch(
      /^Edited count\.ts \(1 edit applied\)\.\n\nDiagnostics \(not an edit failure; the edit above was applied\)/,
    );
    expect(broken).toContain("count.ts:1:14: error typescript2322: Type 'string' is not assignable to type 'number'.");
    fake.reset();
    fake.script(
      {
        toolCalls: [
          { name: "str_replace", arguments: { path: "count.ts", edits: [{ old_text: '= "one";', new_text: "= 1;" }] } },
        ],
      },
      { text: "fixed" },
    );
    await bridge.chat(sessionId, "fix it");
    expect(lastToolOutput(fake.requests[1])).toBe("Edited count.ts (1 edit applied).");
    const displays = toolDisplays(await bridge.events(sessionId));
    expect(displays.at(-1)).toMatchObject({ path: "count.ts", diagnostics: [] });
    expect(displays.at(-2)).toMatchObject({
      diagnostics: [expect.objectContaining({ line: 1, column: 14, code: "2322" })],
    });
    const status = (await (await bridge.api("/api/v1/diagnostics")).json()) as LanguageServerStatus[];
    expect(status).toContainEqual(
      expect.objectContaining({ workspace: bridge.workspace, language: "typescript", state: "running" }),
    );
  }, 180_000);

  it("a file no server handles gets no diagnostics section; a missing server is noted for Settings", async () => {
    // pyright-langserver on PATH would give diagnostics instead; this machine has none (the first case covers them).
    const sessionId = await bridge.createSession();
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.md", content: "# notes\n" } }] },
      { toolCalls: [{ name: "write_file", arguments: { path: "tool.py", content: "x: int = 'a'\n" } }] },
      { text: "ok" },
    );
    await bridge.chat(sessionId, "write");
    expect(lastToolOutput(fake.requests[1])).toBe("Created notes.md (8 bytes).");
    expect(lastToolOutput(fake.requests[2])).toBe("Created tool.py (13 bytes).");
    const status = (await (await bridge.api("/api/v1/diagnostics")).json()) as LanguageServerStatus[];
    expect(status).toContainEqual(
      expect.objectContaining({
        language: "python",
        state: "unavailable",
        note: expect.stringContaining("pyright is not installed"),
      }),
    );
  });
});
