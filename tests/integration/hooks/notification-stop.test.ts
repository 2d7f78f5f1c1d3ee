import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApprovalView, EventEnvelope, HooksFileView } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { waitFor } from "../helpers";
import { completedOutcomes, plainMessages, startAgentBridge, type AgentBridge } from "../agent/harness";

/*
 * Notification hooks fire when the agent needs a person (an approval, a password, a budget) and
 * when a turn ends waiting for the next prompt, in Claude Code's shape; a Stop hook that blocks
 * sends the turn back to work with its reason, a few times at most, with `stop_hook_active` on the
 * re-runs.
 */

let fake: FakeLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url);
  const prices = await fetch(`${bridge.url}/api/v1/settings/prices`, {
    method: "PUT",
    headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
    body: JSON.stringify({ prices: { "fake-model": { input: 1, cached_input: 0.1, output: 2 } } }),
  });
  expect(prices.ok).toBe(true);
});
afterAll(async () => {
  await bridge.close();
  await fake.close();
});
afterEach(() => fake.reset());

/** Appends each event's stdin, one JSON line, to a file in the workspace. */
const record = (file: string) => `cat >> "$CLAUDE_PROJECT_DIR/${file}"; echo >> "$CLAUDE_PROJECT_DIR/${file}"`;

/** A workspace with trusted `.claude/settings.json` hooks, and a session on it. */
async function trustedSession(hooks: unknown, yolo: boolean): Promise<{ workspace: string; sessionId: string }> {
  const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-hooks-ws-")));
  await fs.mkdir(path.join(workspace, ".claude"));
  await fs.writeFile(path.join(workspace, ".claude/settings.json"), JSON.stringify({ hooks }, null, 2));
  const created = await bridge.api("/api/v1/sessions", { workspace, yolo });
  const { id: sessionId } = (await created.json()) as { id: string };
  const [file] = (await (await bridge.api(`/api/v1/sessions/${sessionId}/hooks`)).json()) as HooksFileView[];
  expect((await bridge.api("/api/v1/hooks/trust", { file: file.file, sha256: file.sha256 })).status).toBe(200);
  return { workspace, sessionId };
}

async function lines(file: string): Promise<Record<string, unknown>[]> {
  const text = await fs.readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function pending(sessionId: string, tool: string): Promise<ApprovalView> {
  return waitFor(
    async () =>
      ((await (await bridge.api("/api/v1/approvals?status=pending")).json()) as ApprovalView[]).find(
        (approval) => approval.session_id === sessionId && approval.tool === tool,
      ),
    20_000,
    `a pending ${tool} request`,
  );
}

function hookRuns(events: EventEnvelope[]) {
  return events.flatMap((event) => (event.type === "hook.ran" ? [event.payload] : []));
}

describe("Notification hooks", () => {
  it("fire when an approval or a password waits (permission_prompt, elicitation_dialog) and when the turn ends (idle_prompt)", async () => {
    const { workspace, sessionId } = await trustedSession(
      {
        Notification: [
          { matcher: "permission_prompt|elicitation_dialog", hooks: [{ type: "command", command: record(".asks") }] },
          { matcher: "idle_prompt", hooks: [{ type: "command", command: record(".idle") }] },
        ],
      },
      false,
    );
    fake.script({ toolCalls: [{ name: "shell", arguments: { command: "sudo true" } }] }, { text: "Gave up on sudo." });
    const chat = bridge.chat(sessionId, "run sudo");

    // The approval waits: the hook has run by then, while nobody decided anything.
    const approval = await pending(sessionId, "shell");
    const asks = path.join(workspace, ".asks");
    const [permission] = await waitFor(async () => {
      const seen = await lines(asks);
      return seen.length ? seen : undefined;
    });
    expect(permission).toEqual({
      session_id: sessionId,
      cwd: workspace,
      hook_event_name: "Notification",
      notification_type: "permission_prompt",
      message: "Worldline needs your permission to use shell",
    });
    await fs.stat(path.join(workspace, ".idle")).then(
      () => expect.fail("idle_prompt fired while the turn still waits"),
      () => undefined,
    );
    await bridge.api(`/api/v1/approvals/${approval.approval_id}`, { decision: "allow_once" });

    // Then sudo asks for a password: an elicitation, declined.
    const password = await waitFor(async () => {
      const all = (await (await bridge.api("/api/v1/approvals?status=pending")).json()) as ApprovalView[];
      return all.find((a) => a.session_id === sessionId && a.kind === "password");
    });
    const second = await waitFor(async () => (await lines(asks))[1]);
    expect(second).toMatchObject({ notification_type: "elicitation_dialog", hook_event_name: "Notification" });
    expect(String(second.message)).toMatch(/^Worldline needs a password: /);
    const declined = await bridge.api(`/api/v1/tasks/${password.task_id}/password/stream`, {
      approval_id: password.approval_id,
      password: null,
    });
    expect(declined.status).toBeLessThan(300);
    await declined.text();
    await chat;

    const events = await bridge.events(sessionId);
    expect(completedOutcomes(events)).toEqual(["completed"]);
    expect(await lines(path.join(workspace, ".idle"))).toEqual([
      {
        session_id: sessionId,
        cwd: workspace,
        hook_event_name: "Notification",
        notification_type: "idle_prompt",
        message: "Worldline is waiting for your input",
      },
    ]);
    // Each run is a transcript line of the turn, before its end.
    const runs = hookRuns(events);
    expect(runs.map((run) => `${run.event}:${run.outcome}`)).toEqual([
      "Notification:ok",
      "Notification:ok",
      "Notification:ok",
    ]);
    const completedAt = events.findIndex((event) => event.type === "turn.completed");
    expect(events.findLastIndex((event) => event.type === "hook.ran")).toBeLessThan(completedAt);
  });

  it("fire when a budget request waits", async () => {
    const { workspace, sessionId } = await trustedSession(
      { Notification: [{ matcher: "permission_prompt", hooks: [{ type: "command", command: record(".asks") }] }] },
      true,
    );
    const patched = await fetch(`${bridge.url}/api/v1/sessions/${sessionId}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
      body: JSON.stringify({ budget_usd: 0.001 }),
    });
    expect(patched.ok).toBe(true);
    await fs.writeFile(path.join(workspace, "a.txt"), "alpha\n");
    fake.script(
      {
        toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }],
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
      },
      { text: "never sent" },
    );
    const chat = bridge.chat(sessionId, "read a.txt");
    const request = await pending(sessionId, "budget");
    const [notified] = await waitFor(async () => {
      const seen = await lines(path.join(workspace, ".asks"));
      return seen.length ? seen : undefined;
    });
    expect(notified).toMatchObject({ notification_type: "permission_prompt", hook_event_name: "Notification" });
    expect(String(notified.message)).toContain(
      "Worldline needs you to allow more spend: The session's budget is reached",
    );
    await bridge.api(`/api/v1/approvals/${request.approval_id}`, { decision: "reject" });
    await chat;
    expect(fake.requests).toHaveLength(1);
  });
});

describe("Stop hooks that block", () => {
  it("send the turn on with the hook's reason, and run again with stop_hook_active true", async () => {
    const check =
      `${record(".stops")}; [ -f "$CLAUDE_PROJECT_DIR/.tests-pass" ] && exit 0; ` +
      "echo 'The tests fail: run make test and fix them before stopping.' >&2; exit 2";
    const { workspace, sessionId } = await trustedSession(
      { Stop: [{ hooks: [{ type: "command", command: check }] }] },
      true,
    );
    fake.script(
      { text: "All done." },
      { toolCalls: [{ name: "shell", arguments: { command: "touch .tests-pass" } }] },
      { text: "Now the tests pass." },
    );
    await bridge.chat(sessionId, "fix the build");

    expect(fake.requests).toHaveLength(3);
    // For the model only, after its answer (checkpoint markers aside).
    const fed = plainMessages(fake.requests[1]).at(-1);
    expect(fed).toEqual({
      role: "user",
      content: "Stop hook feedback:\nThe tests fail: run make test and fix them before stopping.",
    });
    const stops = await lines(path.join(workspace, ".stops"));
    expect(stops.map((stop) => [stop.hook_event_name, stop.stop_hook_active])).toEqual([
      ["Stop", false],
      ["Stop", true],
    ]);
    const events = await bridge.events(sessionId);
    // One turn, from the prompt to the answer after the fix.
    expect(completedOutcomes(events)).toEqual(["completed"]);
    expect(events.filter((event) => event.type === "turn.started")).toHaveLength(1);
    expect(hookRuns(events).map((run) => `${run.event}:${run.outcome}`)).toEqual(["Stop:blocked", "Stop:ok"]);
    // The person's transcript shows their prompt only: the feedback is the hook's line.
    expect(events.filter((event) => event.type === "message.user")).toHaveLength(1);
  });

  it("a Stop hook that always blocks (JSON decision) sends the turn on 3 times, then the answer stands with a notice", async () => {
    const always = `echo '{"decision":"block","reason":"Not yet: write the changelog."}'`;
    const { sessionId } = await trustedSession({ Stop: [{ hooks: [{ type: "command", command: always }] }] }, true);
    fake.script({ text: "one" }, { text: "two" }, { text: "three" }, { text: "four" }, { text: "five" });
    await bridge.chat(sessionId, "finish");

    expect(fake.requests).toHaveLength(4);
    expect(plainMessages(fake.requests[3]).at(-1)?.content).toBe("Stop hook feedback:\nNot yet: write the changelog.");
    const events = await bridge.events(sessionId);
    expect(completedOutcomes(events)).toEqual(["completed"]);
    expect(hookRuns(events).map((run) => run.outcome)).toEqual(["blocked", "blocked", "blocked", "blocked"]);
    const notices = events.flatMap((event) => (event.type === "notice" ? [event.payload.text] : []));
    expect(notices.join("\n")).toContain("after 3 continuations the turn ends here");
  });
});
