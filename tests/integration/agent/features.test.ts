import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { completedOutcomes, messagesOf, plainMessages, plainText, startAgentBridge, type AgentBridge } from "./harness";

let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
afterEach(() => fake.reset());

describe("context across a restart", () => {
  it("restores the exact history after the bridge restarts", async () => {
    const first = await startAgentBridge(fake.url);
    await fs.writeFile(path.join(first.workspace, "notes.md"), "remember me\n");
    const sessionId = await first.createSession();
    fake.script(
      { toolCalls: [{ name: "read_file", arguments: { path: "notes.md" } }] },
      { text: "It says remember me." },
    );
    await first.chat(sessionId, "read notes");
    const before = messagesOf(fake.requests[1]);
    await first.close();

    const second = await startAgentBridge(fake.url, { home: first.home, workspace: first.workspace });
    try {
      fake.script({ text: "still here" });
      await second.chat(sessionId, "and now?");
      const after = messagesOf(fake.requests[2]);
      // Everything the model saw before, byte for byte (the system prompt is kept with the session), its
      // answer, then the new prompt.
      expect(after.slice(0, before.length)).toEqual(before);
      expect(after[before.length]).toMatchObject({ role: "assistant", content: "It says remember me." });
      expect(plainMessages(fake.requests[2]).at(-1)).toMatchObject({ role: "user", content: "and now?" });
    } finally {
      await second.close();
    }
  });
});

describe("features", () => {
  let bridge: AgentBridge;
  beforeAll(async () => {
    bridge = await startAgentBridge(fake.url, { env: { WORLDLINE_CONTEXT_WINDOW: "4000" } });
  });
  afterAll(() => bridge.close());

  it("compacts on /compact with a focus: one summary call, recent messages verbatim", async () => {
    const sessionId = await bridge.createSession();
    for (let i = 1; i <= 4; i++) {
      fake.script({ text: `answer ${i} ${"x".repeat(1200)}` });
      await bridge.chat(sessionId, `question ${i}`);
    }
    fake.script({ text: "SUMMARY: asked four questions" });
    await bridge.chat(sessionId, "/compact keep the questions");
    const summaryRequest = messagesOf(fake.requests[4]);
    expect(summaryRequest[0].content).toContain("compact the history");
    expect(summaryRequest[1].content).toContain("keep the questions");
    expect(summaryRequest[1].content).toContain("question 1");
    expect(fake.requests[4].body.tools).toBeUndefined();

    fake.script({ text: "after" });
    await bridge.chat(sessionId, "question 5");
    const next = plainMessages(fake.requests[5]);
    expect(next[1].content).toContain("SUMMARY: asked four questions");
    expect(next.some((m) => m.content === "question 1")).toBe(false);
    expect(next.some((m) => m.content === "question 4")).toBe(true);
    const events = await bridge.events(sessionId);
    const done = events.find((e) => e.type === "compaction.completed");
    expect(done?.type === "compaction.completed" && done.payload.outcome).toBe("completed");
    expect(events.some((e) => e.type === "checkpoint.created" && e.payload.reason === "compaction")).toBe(true);
  });

  it("compacts automatically when the context passes the threshold", async () => {
    const sessionId = await bridge.createSession();
    // Old enough and big enough to be summarised: over the quarter of the window kept verbatim.
    fake.script({ text: `first ${"y".repeat(5000)}`, usage: { prompt_tokens: 100, completion_tokens: 1260 } });
    await bridge.chat(sessionId, "hello");
    fake.script(
      { toolCalls: [{ name: "list_dir", arguments: {} }], usage: { prompt_tokens: 3500, completion_tokens: 10 } },
      { text: "AUTO SUMMARY" },
      { text: "done" },
    );
    await bridge.chat(sessionId, "big work");
    expect(messagesOf(fake.requests[2])[0].content).toContain("compact the history");
    expect(plainMessages(fake.requests[3])[1].content).toContain("AUTO SUMMARY");
    const started = (await bridge.events(sessionId)).find((e) => e.type === "compaction.started");
    expect(started?.type === "compaction.started" && started.payload.reason).toBe("auto");
  });

  it("D-Mail reverts the context to the checkpoint and continues with the message", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "hi there" });
    await bridge.chat(sessionId, "first turn"); // checkpoints 0 (turn) and 1 (step)
    fake.script(
      { toolCalls: [{ name: "read_file", arguments: { path: "missing.txt" } }] },
      {
        toolCalls: [
          {
            name: "send_dmail",
            arguments: { checkpoint_id: 1, message: "missing.txt does not exist; answer without it" },
          },
        ],
      },
      { text: "answered without the file" },
    );
    await bridge.chat(sessionId, "second turn");
    const after = messagesOf(fake.requests[3]);
    expect(after.some((m) => plainText(String(m.content)) === "second turn")).toBe(false);
    expect(after.some((m) => m.role === "tool")).toBe(false);
    const dmail = after.at(-1);
    expect(dmail?.role).toBe("user");
    expect(dmail?.content).toContain("D-Mail");
    expect(dmail?.content).toContain("missing.txt does not exist");
    expect(after.some((m) => String(m.content).includes("<system>CHECKPOINT 0</system>"))).toBe(true);
    expect(after.some((m) => String(m.content).includes("<system>CHECKPOINT 1</system>"))).toBe(false);
    expect(completedOutcomes(await bridge.events(sessionId))).toEqual(["completed", "completed"]);
  });

  it("a D-Mail restores the checkpoint's files when the session allows it, and the restore is undoable", async () => {
    const sessionId = await bridge.createSession();
    const allow = await fetch(`${bridge.url}/api/v1/sessions/${sessionId}/checkpoint-settings`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
      body: JSON.stringify({ dmail_restores_files: true }),
    });
    expect(allow.status).toBe(200);
    fake.script({ text: "hi there" });
    await bridge.chat(sessionId, "first turn"); // checkpoints 0 (turn) and 1 (step), no files yet
    const file = path.join(bridge.workspace, "dmail-idea.txt");
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "dmail-idea.txt", content: "a bad idea\n" } }] },
      { toolCalls: [{ name: "send_dmail", arguments: { checkpoint_id: 1, message: "the idea was bad" } }] },
      { text: "went another way" },
    );
    await bridge.chat(sessionId, "second turn");
    await expect(fs.access(file)).rejects.toThrow(); // back as at checkpoint 1
    const rewound = (await bridge.events(sessionId)).filter((event) => event.type === "checkpoint.rewound");
    expect(rewound.map((event) => event.payload)).toEqual([
      expect.objectContaining({ number: 1, conversation: false, files: true, written: 0, deleted: 1 }),
    ]);
    expect(messagesOf(fake.requests.at(-1)!).at(-1)?.content).toContain("restored to that checkpoint as well");

    const undo = await bridge.api(`/api/v1/sessions/${sessionId}/rewind/undo`, {});
    expect(undo.status).toBe(200);
    expect(await fs.readFile(file, "utf8")).toBe("a bad idea\n");
  });

  it("refuses a D-Mail to a checkpoint that does not exist", async () => {
    const sessionId = await bridge.createSession();
    fake.script(
      { toolCalls: [{ name: "send_dmail", arguments: { checkpoint_id: 99, message: "x" } }] },
      { text: "ok" },
    );
    await bridge.chat(sessionId, "try");
    const tool = messagesOf(fake.requests[1]).find((m) => m.role === "tool");
    expect(tool?.content).toContain("no checkpoint 99");
  });

  it("runs a subagent with a restricted toolset and nests its events under the task call", async () => {
    const sessionId = await bridge.createSession();
    await fs.writeFile(path.join(bridge.workspace, "deep.txt"), "the answer is 42\n");
    fake.script(
      {
        toolCalls: [
          {
            id: "call_task",
            name: "task",
            arguments: { description: "find the answer", prompt: "Read deep.txt and report the number." },
          },
        ],
      },
      { toolCalls: [{ id: "call_sub", name: "read_file", arguments: { path: "deep.txt" } }] },
      { text: "The number is 42." },
      { text: "The subagent says 42." },
    );
    await bridge.chat(sessionId, "delegate");
    const subRequest = fake.requests[1].body;
    expect(subRequest.messages[0].content).toContain("subagent");
    expect(subRequest.tools.map((t: { function: { name: string } }) => t.function.name).sort()).toEqual(
      ["fetch_url", "glob", "grep", "list_dir", "read_file"].sort(),
    );
    const parentTool = plainMessages(fake.requests[3]).find((m) => m.role === "tool");
    expect(parentTool).toMatchObject({ tool_call_id: "call_task", content: "The number is 42." });
    const events = await bridge.events(sessionId);
    const nested = events.find((e) => e.type === "tool.call" && e.payload.toolCallId === "call_sub");
    expect(nested?.type === "tool.call" && nested.payload.parentToolCallId).toBe("call_task");
  });

  it("keeps the todo list: persisted on the session and emitted", async () => {
    const sessionId = await bridge.createSession();
    const todos = [
      { title: "Read the code", status: "done" },
      { title: "Write the fix", status: "in_progress" },
    ];
    fake.script({ toolCalls: [{ name: "todo", arguments: { todos } }] }, { text: "planned" });
    await bridge.chat(sessionId, "plan");
    const event = (await bridge.events(sessionId)).find((e) => e.type === "todo.updated");
    expect(event?.type === "todo.updated" && event.payload.items).toEqual(todos);
    const session = await bridge.services.sessions.get(sessionId);
    expect(JSON.parse(session.todos)).toEqual(todos);
  });
});
