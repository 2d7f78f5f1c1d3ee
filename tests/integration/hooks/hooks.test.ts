import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope, HooksFileView } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { completedOutcomes, messagesOf, startAgentBridge, type AgentBridge } from "../agent/harness";

let fake: FakeLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url);
});
afterAll(async () => {
  await bridge.close();
  await fake.close();
});
afterEach(() => fake.reset());

/** A team's Claude Code settings: format after an edit, block `rm -rf`, context on every prompt, a notifier on Stop. */
const TEAM_SETTINGS = {
  permissions: { allow: ["Bash(npm test)"] },
  hooks: {
    PostToolUse: [
      { matcher: "Edit|Write", hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh' }] },
    ],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: ".claude/hooks/no-rm-rf.sh", timeout: 30 }] }],
    UserPromptSubmit: [
      {
        hooks: [
          {
            type: "command",
            command: `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Team rule: tabs, never spaces."}}'`,
          },
        ],
      },
    ],
    Stop: [{ hooks: [{ type: "command", command: 'cat > "$CLAUDE_PROJECT_DIR/.notified.json"' }] }],
  },
};

const SCRIPTS: Record<string, string> = {
  // The formatter: trailing blanks off the edited file.
  "format.sh":
    '#!/bin/bash\nfile=$(sed -n \'s/.*"file_path":"\\([^"]*\\)".*/\\1/p\')\n[ -n "$file" ] && sed -i \'s/[[:space:]]*$//\' "$file"\nexit 0\n',
  "no-rm-rf.sh":
    "#!/bin/bash\nif grep -q 'rm -rf'; then\n  echo 'rm -rf is not allowed in this repository; delete files one by one with git rm' >&2\n  exit 2\nfi\nexit 0\n",
};

async function newWorkspace(settings: unknown): Promise<string> {
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-hooks-ws-")));
  await fs.mkdir(path.join(workspace, ".claude/hooks"), { recursive: true });
  for (const [name, text] of Object.entries(SCRIPTS)) {
    await fs.writeFile(path.join(workspace, ".claude/hooks", name), text, { mode: 0o755 });
  }
  await fs.writeFile(path.join(workspace, ".claude/settings.json"), JSON.stringify(settings, null, 2));
  return workspace;
}

async function sessionOn(workspace: string, yolo = true): Promise<string> {
  const response = await bridge.api("/api/v1/sessions", { workspace, yolo });
  expect(response.status).toBeLessThan(300);
  return ((await response.json()) as { id: string }).id;
}

async function hooksOf(sessionId: string): Promise<HooksFileView[]> {
  const response = await bridge.api(`/api/v1/sessions/${sessionId}/hooks`);
  expect(response.status).toBe(200);
  return (await response.json()) as HooksFileView[];
}

async function trust(file: HooksFileView): Promise<void> {
  const response = await bridge.api("/api/v1/hooks/trust", { file: file.file, sha256: file.sha256 });
  expect(response.status).toBe(200);
}

function hookRuns(events: EventEnvelope[]) {
  return events.flatMap((event) => (event.type === "hook.ran" ? [event.payload] : []));
}

function notices(events: EventEnvelope[]): string[] {
  return events.flatMap((event) => (event.type === "notice" ? [event.payload.text] : []));
}

function toolOutputs(request: FakeLlm["requests"][number]): string[] {
  return messagesOf(request).flatMap((message) => (message.role === "tool" ? [String(message.content)] : []));
}

describe("a team's .claude/settings.json hooks", () => {
  it("run only once trusted: format after an edit, block rm -rf with a reason, add context, notify on Stop", async () => {
    const workspace = await newWorkspace(TEAM_SETTINGS);
    await fs.writeFile(path.join(workspace, "notes.txt"), "one\n");
    const sessionId = await sessionOn(workspace);

    // Untrusted: listed with its commands, a notice says so, nothing runs.
    const [listed] = await hooksOf(sessionId);
    expect(listed).toMatchObject({
      file: path.join(workspace, ".claude/settings.json"),
      trusted: false,
      source: "workspace",
    });
    expect(listed.events.sort()).toEqual(["PostToolUse", "PreToolUse", "Stop", "UserPromptSubmit"]);
    expect(listed.commands.map((c) => c.command)).toContain(".claude/hooks/no-rm-rf.sh");
    fake.script({ text: "hello" });
    await bridge.chat(sessionId, "hi");
    let events = await bridge.events(sessionId);
    expect(hookRuns(events)).toEqual([]);
    expect(notices(events).join("\n")).toContain(`The hooks in ${listed.file} do not run until a person trusts them`);
    expect(JSON.stringify(fake.requests[0].body.messages)).not.toContain("Team rule");
    await expect(fs.stat(path.join(workspace, ".notified.json"))).rejects.toThrow();

    await trust(listed);
    expect((await hooksOf(sessionId))[0].trusted).toBe(true);
    fake.reset();
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "one   \ntwo\t\n" } }] },
      { toolCalls: [{ name: "shell", arguments: { command: "rm -rf build" } }] },
      { toolCalls: [{ name: "shell", arguments: { command: "echo fine" } }] },
      { text: "done" },
    );
    await bridge.chat(sessionId, "tidy up");
    // Context on the prompt, for the model.
    expect(JSON.stringify(fake.requests[0].body.messages)).toContain("Team rule: tabs, never spaces.");
    // Formatted after the edit.
    expect(await fs.readFile(path.join(workspace, "notes.txt"), "utf8")).toBe("one\ntwo\n");
    // rm -rf blocked, with the reason the model sees; the next command ran.
    expect(toolOutputs(fake.requests[2]).at(-1)).toContain(
      "A PreToolUse hook blocked this call: rm -rf is not allowed in this repository",
    );
    expect(toolOutputs(fake.requests[3]).at(-1)).toContain("fine");
    // The notifier got the Stop event.
    const notified = JSON.parse(await fs.readFile(path.join(workspace, ".notified.json"), "utf8"));
    expect(notified).toMatchObject({ session_id: sessionId, cwd: workspace, hook_event_name: "Stop" });
    events = await bridge.events(sessionId);
    const runs = hookRuns(events);
    expect(runs.map((run) => `${run.event}:${run.outcome}:${run.exitCode}`)).toEqual([
      "UserPromptSubmit:ok:0",
      "PostToolUse:ok:0",
      "PreToolUse:blocked:2",
      "PreToolUse:ok:0",
      "Stop:ok:0",
    ]);
    expect(runs.every((run) => run.ms >= 0 && run.file === listed.file)).toBe(true);
    const audit = (await (await bridge.api(`/api/v1/audit/commands?session_id=${sessionId}`)).json()) as {
      command: string;
      actionType?: string;
      action_type?: string;
    }[];
    expect(audit.map((row) => row.command)).toEqual(expect.arrayContaining([".claude/hooks/no-rm-rf.sh"]));

    // A changed file asks again: the next turn runs none of its hooks.
    const changed = { ...TEAM_SETTINGS, hooks: { ...TEAM_SETTINGS.hooks, Stop: [] } };
    await fs.writeFile(path.join(workspace, ".claude/settings.json"), JSON.stringify(changed, null, 2));
    const [relisted] = await hooksOf(sessionId);
    expect(relisted.trusted).toBe(false);
    expect(relisted.sha256).not.toBe(listed.sha256);
    fake.reset();
    fake.script({ text: "ok" });
    const before = hookRuns(await bridge.events(sessionId)).length;
    await bridge.chat(sessionId, "again");
    expect(JSON.stringify(fake.requests[0].body.messages.at(-1))).not.toContain("Team rule");
    expect(hookRuns(await bridge.events(sessionId)).length).toBe(before);
    await trust(relisted);
    fake.reset();
    fake.script({ text: "ok" });
    await bridge.chat(sessionId, "and again");
    expect(JSON.stringify(fake.requests[0].body.messages.at(-1))).toContain("Team rule");
  });
});

describe("bad hooks", () => {
  it("a file that does not parse: a notice names the file and line, and none of its hooks run", async () => {
    const workspace = await newWorkspace({});
    const file = path.join(workspace, ".worldline/hooks.json");
    await fs.mkdir(path.dirname(file));
    await fs.writeFile(file, '{\n  "hooks": {\n    "Stop": [ { "hooks": [ ] } ],\n    oops\n  }\n}\n');
    const sessionId = await sessionOn(workspace);
    const [listed] = await hooksOf(sessionId);
    expect(listed.error).toMatch(new RegExp(`^${file}:4: not valid JSON`));
    await trust(listed);
    fake.script({ text: "ok" });
    await bridge.chat(sessionId, "hi");
    const events = await bridge.events(sessionId);
    expect(notices(events).join("\n")).toContain(`${file}:4: not valid JSON`);
    expect(hookRuns(events)).toEqual([]);
  });

  it("a file naming an unknown event: a notice with its line, and none of its hooks run", async () => {
    const workspace = await newWorkspace({
      hooks: {
        Stop: [{ hooks: [{ type: "command", command: "touch stopped" }] }],
        BeforeLunch: [{ hooks: [{ type: "command", command: "true" }] }],
      },
    });
    const sessionId = await sessionOn(workspace);
    const [listed] = await hooksOf(sessionId);
    expect(listed.error).toContain(`.claude/settings.json:13: unknown hook event "BeforeLunch"`);
    await trust(listed);
    fake.script({ text: "ok" });
    await bridge.chat(sessionId, "hi");
    expect(notices(await bridge.events(sessionId)).join("\n")).toContain('unknown hook event "BeforeLunch"');
    await expect(fs.stat(path.join(workspace, "stopped"))).rejects.toThrow();
  });

  it("a hook that hangs is killed at its time limit and the turn goes on; megabytes of output are capped", async () => {
    const workspace = await newWorkspace({
      hooks: {
        PreToolUse: [
          { matcher: "read_file", hooks: [{ type: "command", command: "sleep 600 & sleep 600", timeout: 1 }] },
          { matcher: "Read", hooks: [{ type: "command", command: "head -c 5000000 /dev/zero | tr '\\0' x; exit 0" }] },
        ],
      },
    });
    await fs.writeFile(path.join(workspace, "a.txt"), "alpha\n");
    const sessionId = await sessionOn(workspace);
    await trust((await hooksOf(sessionId))[0]);
    fake.script({ toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] }, { text: "read it" });
    const started = Date.now();
    await bridge.chat(sessionId, "read a.txt");
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(toolOutputs(fake.requests[1]).at(-1)).toContain("alpha");
    const runs = hookRuns(await bridge.events(sessionId));
    expect(runs.find((run) => run.command.startsWith("sleep"))).toMatchObject({ outcome: "timed_out", exitCode: null });
    expect(runs.find((run) => run.command.startsWith("head"))).toMatchObject({ outcome: "ok", exitCode: 0 });
    expect(completedOutcomes(await bridge.events(sessionId))).toEqual(["completed"]);
  }, 30_000);

  it("a hook that blocks every tool: the turn stops with a clear message instead of looping", async () => {
    const workspace = await newWorkspace({
      hooks: {
        PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "echo 'frozen for release' >&2; exit 2" }] }],
      },
    });
    const sessionId = await sessionOn(workspace);
    await trust((await hooksOf(sessionId))[0]);
    fake.script(
      { toolCalls: [{ name: "read_file", arguments: { path: "a" } }] },
      { toolCalls: [{ name: "read_file", arguments: { path: "b" } }] },
      { toolCalls: [{ name: "glob", arguments: { pattern: "*" } }] },
      { toolCalls: [{ name: "list_dir", arguments: { path: "." } }] },
      { text: "never reached" },
    );
    await bridge.chat(sessionId, "look around");
    const events = await bridge.events(sessionId);
    expect(completedOutcomes(events)).toEqual(["loop_detected"]);
    expect(notices(events).join("\n")).toContain("hooks blocked every tool call in 3 steps in a row");
    expect(fake.requests).toHaveLength(3);
  });

  it("an approving PreToolUse hook stands in for a person's allow once, never for a deny rule", async () => {
    const workspace = await newWorkspace({
      hooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [{ type: "command", command: `echo '{"decision":"approve","reason":"ok by team"}'` }],
          },
        ],
      },
    });
    const sessionId = await sessionOn(workspace, false);
    await trust((await hooksOf(sessionId))[0]);
    const rule = await bridge.api("/api/v1/rules", {
      scope: "session",
      session_id: sessionId,
      tool: "shell",
      pattern: "git push*",
      action: "deny",
    });
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "touch made-by-shell" } }] },
      { toolCalls: [{ name: "shell", arguments: { command: "git push origin main" } }] },
      { text: "done" },
    );
    await bridge.chat(sessionId, "go");
    expect(rule.status).toBe(201);
    // No person was asked (the session is not yolo): the hook's approval let the first command run.
    await fs.stat(path.join(workspace, "made-by-shell"));
    expect(toolOutputs(fake.requests[2]).at(-1)).toContain("deny rule");
    const runs = hookRuns(await bridge.events(sessionId));
    expect(runs.map((run) => run.outcome)).toEqual(["approved", "approved"]);
  });
});
