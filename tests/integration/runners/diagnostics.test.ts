import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FileDiagnostics, LanguageServerStatus } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { readSse, startTestBridge, waitFor, type TestBridge } from "../helpers";
import { plainMessages } from "../agent/harness";
import { runnerSessionOn, tempDir, type RunnerProcess } from "./support";

/** Language-server diagnostics after edits for a session on a runner: the server runs on the runner's machine. */
let fake: FakeLlm;
let hub: TestBridge;
let runner: RunnerProcess;
let root: string;
let sessionId: string;

async function turn(message: string): Promise<void> {
  const response = await hub.api("/api/v1/chat/stream", { body: { message, session_id: sessionId } });
  expect(response.status).toBe(200);
  await readSse(response);
}

/** One turn whose one tool call replaces `from` with `to` in count.ts; the tool's result as the model saw it. */
async function replace(from: string, to: string): Promise<string> {
  fake.reset();
  const edits = [{ old_text: from, new_text: to }];
  fake.script({ toolCalls: [{ name: "str_replace", arguments: { path: "count.ts", edits } }] }, { text: "done" });
  await turn(`replace ${from}`);
  return lastToolOutput(fake.requests[1]);
}

function lastToolOutput(request: FakeLlm["requests"][number]): string {
  return String(
    plainMessages(request)
      .filter((message) => message.role === "tool")
      .at(-1)?.content,
  ).trim();
}

beforeAll(async () => {
  fake = await startFakeLlm();
  hub = await startTestBridge({ llmUrl: fake.url });
  root = await tempDir("wl-runner-diag-root-");
  await fs.writeFile(
    path.join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true } }),
  );
  await fs.writeFile(path.join(root, "count.ts"), "export const count: number = 1;\n");
  ({ runner, sessionId } = await runnerSessionOn(hub, "lspbox", root));
}, 60_000);

afterAll(async () => {
  runner?.child.kill("SIGKILL");
  await hub?.stop();
  await fake?.close();
});

describe("diagnostics on a runner", () => {
  it("an edit that introduces a type error returns it from the runner's language server; the fix returns none", async () => {
    // A cold server takes longer than an edit waits (2 s): one edit starts it, then the test waits for it to be warm.
    fake.script(
      {
        toolCalls: [
          { name: "write_file", arguments: { path: "count.ts", content: "export const count: number = 1;\n" } },
        ],
      },
      { text: "ok" },
    );
    await turn("warm up");
    await waitFor(
      async () => {
        const response = await hub.api(`/api/v1/sessions/${sessionId}/diagnostics?path=count.ts`);
        return ((await response.json()) as FileDiagnostics).diagnostics !== null;
      },
      120_000,
      "the runner's TypeScript server's first diagnostics",
    );
    fake.reset();

    const broken = await replace("= 1;", '= "one";');
    expect(broken).toMatch(/^Edited count\.ts \(1 edit applied\)\.\n\nDiagnostics \(not an edit failure/);
    expect(broken).toContain("count.ts:1:14: error typescript2322: Type 'string' is not assignable to type 'number'.");
    expect(await replace('= "one";', "= 1;")).toBe("Edited count.ts (1 edit applied).");

    const status = (await (await hub.api("/api/v1/diagnostics")).json()) as LanguageServerStatus[];
    expect(status).toContainEqual(
      expect.objectContaining({ workspace: root, language: "typescript", state: "running" }),
    );
    // The server is the runner's process: a stdio program the runner started, under its own WORLDLINE_HOME's records.
    const records = await fs.readdir(path.join(runner.home, "run", "processes")).catch(() => []);
    expect(records.length).toBeGreaterThan(0);
  }, 240_000);
});
