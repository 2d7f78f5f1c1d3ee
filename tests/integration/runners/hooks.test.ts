import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope, HooksFileView } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { readSse, startTestBridge, type TestBridge } from "../helpers";
import { plainMessages } from "../agent/harness";
import { runnerSessionOn, tempDir, type RunnerProcess } from "./support";

/** A team's Claude Code hooks for a session on a runner: read, trusted and run on the runner's machine. */
let fake: FakeLlm;
let hub: TestBridge;
let runner: RunnerProcess;
let root: string;
let sessionId: string;

const SETTINGS = {
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: ".claude/hooks/no-rm-rf.sh" }] }],
    // Where it ran: the runner's own WORLDLINE_HOME (the hub's is another folder).
    Stop: [{ hooks: [{ type: "command", command: 'echo "$WORLDLINE_HOME" > "$CLAUDE_PROJECT_DIR/.stopped-on"' }] }],
  },
};

const NO_RM_RF =
  "#!/bin/bash\nif grep -q 'rm -rf'; then\n  echo 'rm -rf is not allowed here; use git rm' >&2\n  exit 2\nfi\nexit 0\n";

async function turn(message: string): Promise<void> {
  const response = await hub.api("/api/v1/chat/stream", { body: { message, session_id: sessionId } });
  expect(response.status).toBe(200);
  await readSse(response);
}

async function hooksFiles(): Promise<HooksFileView[]> {
  const response = await hub.api(`/api/v1/sessions/${sessionId}/hooks`);
  expect(response.status).toBe(200);
  return (await response.json()) as HooksFileView[];
}

async function hookRuns(): Promise<string[]> {
  const response = await hub.api(`/api/v1/sessions/${sessionId}/events?after=0`);
  const events = (await response.json()) as EventEnvelope[];
  return events.flatMap((event) =>
    event.type === "hook.ran" ? [`${event.payload.event}:${event.payload.outcome}:${event.payload.exitCode}`] : [],
  );
}

beforeAll(async () => {
  fake = await startFakeLlm();
  hub = await startTestBridge({ llmUrl: fake.url });
  root = await tempDir("wl-runner-hooks-root-");
  await fs.mkdir(path.join(root, ".claude/hooks"), { recursive: true });
  await fs.writeFile(path.join(root, ".claude/hooks/no-rm-rf.sh"), NO_RM_RF, { mode: 0o755 });
  await fs.writeFile(path.join(root, ".claude/settings.json"), JSON.stringify(SETTINGS, null, 2));
  ({ runner, sessionId } = await runnerSessionOn(hub, "hookbox", root));
}, 60_000);

afterAll(async () => {
  runner?.child.kill("SIGKILL");
  await hub?.stop();
  await fake?.close();
});

describe("hooks on a runner", () => {
  it("run on the runner's machine once trusted: a blocked rm -rf with its reason, and Stop", async () => {
    const [listed] = await hooksFiles();
    expect(listed).toMatchObject({ file: path.join(root, ".claude/settings.json"), trusted: false });
    fake.script({ text: "hello" });
    await turn("hi");
    expect(await hookRuns()).toEqual([]);

    const trusted = await hub.api("/api/v1/hooks/trust", { body: { file: listed.file, sha256: listed.sha256 } });
    expect(trusted.status).toBe(200);
    fake.reset();
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "rm -rf build" } }] },
      { toolCalls: [{ name: "shell", arguments: { command: "echo fine" } }] },
      { text: "done" },
    );
    await turn("tidy up");
    const told = plainMessages(fake.requests[1]).filter((message) => message.role === "tool");
    expect(String(told.at(-1)?.content)).toContain("A PreToolUse hook blocked this call: rm -rf is not allowed here");
    expect(await hookRuns()).toEqual(["PreToolUse:blocked:2", "PreToolUse:ok:0", "Stop:ok:0"]);
    expect((await fs.readFile(path.join(root, ".stopped-on"), "utf8")).trim()).toBe(runner.home);
  }, 120_000);
});
