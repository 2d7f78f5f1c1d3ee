import fs from "node:fs/promises";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { cliEnv, startAcp, tempDirs, textOf, updatesOf, type AcpProcess } from "./support";
import { waitFor } from "../../support/wait";

let fake: FakeLlm;
let proc: AcpProcess;
let workspace: string;
let home: string;
let sessionId: string;

beforeAll(async () => {
  fake = await startFakeLlm({ models: ["fake-model", "other-model"] });
  ({ home, workspace } = await tempDirs());
  await fs.writeFile(path.join(workspace, "notes.txt"), "hello from notes\n");
  proc = startAcp({ cwd: workspace, env: cliEnv(home, fake.url) });
});

afterAll(async () => {
  await proc?.stop();
  await fake?.close();
});

beforeEach(() => fake.reset());

describe("worldline acp", () => {
  it("initializes with the advertised capabilities", async () => {
    const init = await proc.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    expect(init.protocolVersion).toBe(1);
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { embeddedContext: true, image: true },
      mcpCapabilities: { http: true },
      sessionCapabilities: { list: {}, resume: {}, close: {} },
    });
  });

  it("creates a session on cwd '.', with model options in both shapes and the commands after", async () => {
    const created = await proc.agent.request(acp.methods.agent.session.new, { cwd: ".", mcpServers: [] });
    sessionId = created.sessionId;
    expect(created.configOptions?.[0]).toMatchObject({ id: "model", type: "select", currentValue: "fake-model" });
    expect((created as { models?: { currentModelId: string } }).models?.currentModelId).toBe("fake-model");
    expect(created.modes?.availableModes.map((mode) => mode.id)).toEqual(["default", "plan", "yolo"]);
    await waitFor(
      () => updatesOf(proc.updates, sessionId, "available_commands_update").length > 0,
      5_000,
      "available commands",
    );
    const listed = await proc.agent.request(acp.methods.agent.session.list, { cwd: workspace });
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
    expect(listed.sessions.find((s) => s.sessionId === sessionId)?.cwd).toBe(workspace);
  });

  it("streams thoughts and text, inlines resources, and reports usage", async () => {
    fake.script({
      reasoning: "Let me think.",
      text: "The notes say hello.",
      usage: { prompt_tokens: 40, completion_tokens: 7 },
    });
    const response = await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: "text", text: "Summarise these." },
        {
          type: "resource",
          resource: { uri: `file://${workspace}/notes.txt`, text: "hello from notes", mimeType: "text/plain" },
        },
        { type: "resource_link", uri: `file://${workspace}/other.md`, name: "other.md" },
      ],
    });
    expect(response.stopReason).toBe("end_turn");
    const usage = (response as { usage?: { inputTokens: number; outputTokens: number; totalTokens: number } }).usage;
    expect(usage).toEqual({ inputTokens: 40, outputTokens: 7, totalTokens: 47 });
    expect(response._meta?.usage).toEqual(usage);
    // Every update arrived before the response.
    expect(textOf(updatesOf(proc.updates, sessionId, "agent_message_chunk"))).toBe("The notes say hello.");
    expect(textOf(updatesOf(proc.updates, sessionId, "agent_thought_chunk"))).toBe("Let me think.");
    expect(updatesOf(proc.updates, sessionId, "usage_update").at(-1)).toMatchObject({ used: 47 });
    const sent = JSON.stringify(fake.requests[0].body.messages.filter((m: { role: string }) => m.role === "user"));
    expect(sent).toContain("Summarise these.");
    expect(sent).toContain("hello from notes");
    expect(sent).toContain(`${workspace}/other.md`);
  });

  it("reports tool calls with a human title, kind, input and locations", async () => {
    fake.script({ toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] }, { text: "Done reading." });
    const before = proc.updates.length;
    const response = await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "read notes" }],
    });
    expect(response.stopReason).toBe("end_turn");
    const fresh = proc.updates.slice(before);
    const call = updatesOf(fresh, sessionId, "tool_call")[0];
    expect(call).toMatchObject({
      title: "Read file: notes.txt",
      kind: "read",
      rawInput: { path: "notes.txt" },
      locations: [{ path: path.join(workspace, "notes.txt") }],
    });
    const finished = updatesOf(fresh, sessionId, "tool_call_update").filter(
      (u) => u.toolCallId === call.toolCallId && (u.status === "completed" || u.status === "failed"),
    );
    expect(finished).toHaveLength(1);
    expect(finished[0].content?.[0]).toMatchObject({ type: "content" });
    expect(textOf(updatesOf(fresh, sessionId, "agent_message_chunk"))).toBe("Done reading.");
  });

  it("asks the client before an edit and applies it once allowed, showing the diff", async () => {
    proc.permission.asked.length = 0;
    proc.permission.answer = () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "out.txt", content: "written by acp\n" } }] },
      { text: "Wrote it." },
    );
    const before = proc.updates.length;
    const response = await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "write out.txt" }],
    });
    expect(response.stopReason).toBe("end_turn");
    expect(proc.permission.asked).toHaveLength(1);
    expect(proc.permission.asked[0].toolCall).toMatchObject({ title: "Write file: out.txt", kind: "edit" });
    expect(proc.permission.asked[0].options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once"]);
    expect(await fs.readFile(path.join(workspace, "out.txt"), "utf8")).toBe("written by acp\n");
    const done = updatesOf(proc.updates.slice(before), sessionId, "tool_call_update").find(
      (u) => u.status === "completed",
    );
    expect(done?.content).toContainEqual({
      type: "diff",
      path: path.join(workspace, "out.txt"),
      oldText: null,
      newText: "written by acp\n",
    });
  });

  it("treats a rejected or cancelled permission as a rejection", async () => {
    proc.permission.asked.length = 0;
    proc.permission.answer = () => ({ outcome: { outcome: "cancelled" } });
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "touch rejected.txt" } }] },
      { text: "Understood." },
    );
    const before = proc.updates.length;
    await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "touch a file" }],
    });
    expect(proc.permission.asked[0]?.toolCall).toMatchObject({
      title: "Run command: touch rejected.txt",
      kind: "execute",
    });
    await expect(fs.stat(path.join(workspace, "rejected.txt"))).rejects.toThrow();
    const failed = updatesOf(proc.updates.slice(before), sessionId, "tool_call_update").find(
      (u) => u.status === "failed",
    );
    expect(failed).toBeDefined();
    proc.permission.answer = () => ({ outcome: { outcome: "selected", optionId: "allow_once" } });
  });

  it("answers a cancelled prompt with stopReason cancelled", async () => {
    fake.script({ hang: true });
    const prompt = proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "take your time" }],
    });
    await waitFor(() => fake.requests.length > 0, 10_000, "the model request");
    await proc.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await prompt).stopReason).toBe("cancelled");
  });

  it("switches the model with session/set_model and session/set_config_option", async () => {
    await proc.agent.request("session/set_model", { sessionId, modelId: "other-model" });
    await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "which model?" }],
    });
    expect(fake.requests.at(-1)?.body.model).toBe("other-model");

    const changed = await proc.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "fake-model",
    });
    expect(changed.configOptions[0]).toMatchObject({ currentValue: "fake-model" });
    await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "and now?" }],
    });
    expect(fake.requests.at(-1)?.body.model).toBe("fake-model");
  });

  it("sets modes and refuses unknown ones", async () => {
    await proc.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "plan" });
    await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "plan it" }],
    });
    expect(
      JSON.stringify(
        fake.requests
          .at(-1)
          ?.body.messages.filter((m: { role: string }) => m.role === "user")
          .map((m: { content: unknown }) => m.content)
          .filter((c: unknown) => JSON.stringify(c).includes("plan it")),
      ),
    ).toContain("Plan mode");
    await proc.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "default" });
    await expect(
      proc.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "reckless" }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it("plan mode refuses writes at the tool gate, /plan toggles it with current_mode_update, resume reports it", async () => {
    await proc.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "plan" });
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "overwritten\n" } }] },
      { text: "Here is the plan instead." },
    );
    const before = proc.updates.length;
    await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "change the notes" }],
    });
    expect(await fs.readFile(path.join(workspace, "notes.txt"), "utf8")).toBe("hello from notes\n");
    const failed = updatesOf(proc.updates.slice(before), sessionId, "tool_call_update").find(
      (u) => u.status === "failed",
    );
    expect(JSON.stringify(failed?.content)).toContain("Refused: plan mode is on");
    const resumed = await proc.agent.request(acp.methods.agent.session.resume, {
      sessionId,
      cwd: workspace,
      mcpServers: [],
    });
    expect(resumed.modes?.currentModeId).toBe("plan");

    fake.script(
      { toolCalls: [{ name: "propose_plan", arguments: { plan: "1. Rewrite notes.txt" } }] },
      { text: "Waiting." },
    );
    const planned = proc.updates.length;
    await proc.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "plan" }] });
    const shown = updatesOf(proc.updates.slice(planned), sessionId, "tool_call_update").find(
      (u) => u.status === "completed",
    );
    expect(JSON.stringify(shown?.content)).toContain("1. Rewrite notes.txt");

    const toggled = proc.updates.length;
    await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "/plan" }],
    });
    expect(updatesOf(proc.updates.slice(toggled), sessionId, "current_mode_update").at(-1)).toMatchObject({
      currentModeId: "default",
    });
    const after = await proc.agent.request(acp.methods.agent.session.resume, {
      sessionId,
      cwd: workspace,
      mcpServers: [],
    });
    expect(after.modes?.currentModeId).toBe("default");
  });

  it("replays the history on session/load", async () => {
    const before = proc.updates.length;
    await proc.agent.request(acp.methods.agent.session.load, { sessionId, cwd: workspace, mcpServers: [] });
    const replay = proc.updates.slice(before);
    const user = textOf(updatesOf(replay, sessionId, "user_message_chunk"));
    expect(user).toContain("Summarise these.");
    expect(user).toContain("read notes");
    const agent = textOf(updatesOf(replay, sessionId, "agent_message_chunk"));
    expect(agent).toContain("The notes say hello.");
    expect(agent).toContain("Done reading.");
    expect(updatesOf(replay, sessionId, "tool_call")[0]).toMatchObject({ title: "Read file: notes.txt" });
  });

  it("resumes a known session and answers not-found for an unknown one", async () => {
    await expect(
      proc.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: workspace }),
    ).resolves.toBeDefined();
    await expect(
      proc.agent.request(acp.methods.agent.session.resume, { sessionId: "no-such-session", cwd: workspace }),
    ).rejects.toMatchObject({ code: -32002 });
  });

  it("fails the prompt and writes [ERROR] RateLimitError to stderr after retries run out", async () => {
    fake.onRequest = () => ({ status: 429, headers: { "retry-after": "0" } });
    try {
      await expect(
        proc.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] }),
      ).rejects.toMatchObject({ code: -32603 });
    } finally {
      fake.onRequest = undefined;
    }
    await waitFor(() => /\[ERROR\] RateLimitError: HTTP 429/.test(proc.stderr()), 5_000, "the error line");
  });

  // Promptly: within the test's own timeout.
  it("ends promptly when stdin closes", async () => {
    proc.child.stdin.end();
    expect(await proc.exited).toBe(0);
  }, 5_000);
});
