import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { waitFor } from "../helpers";
import { eventNames, startApiBridge, type ApiBridge } from "./support";

/*
 * The scripting surface: chat/stream's vocabulary and order, the task's events and
 * the conversation afterwards, the audit log. Approval and password continuation over
 * SSE are covered in tests/integration/approvals/queue.test.ts ("chat/stream ends at
 * tool_approval_requested; continue/stream …" and "sudo asks for the password …").
 */

let fake: FakeLlm;
let bridge: ApiBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startApiBridge(fake);
  await fs.writeFile(path.join(bridge.workspace, "a.txt"), "alpha\n");
});
afterAll(async () => {
  await bridge.stop();
  await fake.close();
});
afterEach(() => fake.reset());

describe("POST /api/v1/chat/stream", () => {
  it("streams runtime_status before the first tool, reasoning, tool start/finish, content and done with generation stats, in order", async () => {
    const sessionId = await bridge.createSession();
    fake.script(
      {
        reasoning: "Let me look.",
        toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }],
        usage: { prompt_tokens: 50, completion_tokens: 20 },
      },
      { text: "The file says alpha.", usage: { prompt_tokens: 80, completion_tokens: 10 }, delayMs: 5 },
    );
    const events = await bridge.chat({ message: "Look at a.txt", session_id: sessionId, reasoning: "on" });
    const names = eventNames(events);
    const taskId = events[0].data.task_id as string;

    expect(names[0]).toBe("runtime_status");
    expect(events[0].data).toMatchObject({
      task_id: taskId,
      session_id: sessionId,
      conversation_id: sessionId,
      stage: "planning",
    });
    expect(events.every((event) => event.data.task_id === taskId)).toBe(true);
    const firstTool = names.indexOf("tool_call_started");
    const runningTool = events.findIndex(
      (event) => event.event === "runtime_status" && event.data.stage === "running_tool",
    );
    expect(firstTool).toBeGreaterThan(0);
    expect(names.indexOf("reasoning_delta")).toBeLessThan(firstTool);
    expect(runningTool).toBeGreaterThan(firstTool);
    expect(runningTool).toBeLessThan(names.indexOf("tool_call_finished"));
    const started = events[firstTool].data;
    expect(started).toMatchObject({ tool: "read_file", args: { path: "a.txt" } });
    const finished = events.find((event) => event.event === "tool_call_finished")!.data;
    expect(finished).toMatchObject({ tool_call_id: started.tool_call_id, is_error: false });
    expect(String(finished.output)).toContain("alpha");
    const answering = events.findIndex((event) => event.event === "runtime_status" && event.data.stage === "answering");
    expect(answering).toBeGreaterThan(names.indexOf("tool_call_finished"));
    expect(answering).toBeLessThan(names.indexOf("content_delta"));
    expect(
      events
        .filter((event) => event.event === "content_delta")
        .map((event) => event.data.delta)
        .join(""),
    ).toBe("The file says alpha.");
    expect(names.slice(-2)).toEqual(["runtime_status", "done"]);
    expect(events.at(-2)!.data.stage).toBe("done");
    const done = events.at(-1)!.data;
    expect(done).toMatchObject({ task_id: taskId, session_id: sessionId, outcome: "completed" });
    const stats = done.generation_stats as Record<string, number>;
    expect(stats.output_tokens).toBe(30);
    // The public API: usage fields are always there, null when unknown (the scripted usage reports no cache
    // figure; fake-model has no price).
    expect(stats).toMatchObject({ input_tokens: 50 + 80, cached_input_tokens: null, cost_usd: null });
    // The answer streams with a delay per chunk, so the turn's generation took measurable time.
    expect(stats.seconds).toBeGreaterThan(0);
    // The average is tokens over the unrounded time; `seconds` is rounded to the millisecond (±0.0005 s) and
    // the rate to the hundredth, so the average lies between the rates those bounds give.
    const rateAt = (seconds: number) => stats.output_tokens / seconds;
    expect(stats.avg_tokens_per_second).toBeGreaterThanOrEqual(rateAt(stats.seconds + 0.0005) - 0.005);
    expect(stats.avg_tokens_per_second).toBeLessThanOrEqual(rateAt(stats.seconds - 0.0005) + 0.005);
    expect(stats.min_tokens_per_second).toBeLessThanOrEqual(stats.avg_tokens_per_second + 0.01);
    expect(stats.max_tokens_per_second).toBeGreaterThanOrEqual(stats.min_tokens_per_second);
  });

  it("passes reasoning on|off to the model", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "off" }, { text: "on" });
    await bridge.chat({ message: "think less", session_id: sessionId, reasoning: "off" });
    await bridge.chat({ message: "think more", session_id: sessionId, reasoning: "on" });
    expect(fake.requests[0].body.thinking).toEqual({ type: "disabled" });
    expect(fake.requests[1].body.thinking).toEqual({ type: "enabled" });
  });

  it("starts a session from a workspace, and the task's events and the conversation can be read afterwards", async () => {
    fake.script({ toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }] }, { text: "Done reading." });
    const events = await bridge.chat({ message: "Read a.txt please", workspace: bridge.workspace });
    const taskId = events[0].data.task_id as string;
    const sessionId = events[0].data.session_id as string;

    const taskEvents = await bridge.json<{ seq: number; type: string; payload: { turnId?: string } }[]>(
      `/api/v1/tasks/${taskId}/events`,
    );
    expect(taskEvents.map((event) => event.seq)).toEqual(
      [...taskEvents.map((event) => event.seq)].sort((a, b) => a - b),
    );
    expect(taskEvents[0].type).toBe("turn.started");
    expect(taskEvents.at(-1)!.type).toBe("turn.completed");
    expect(taskEvents.map((event) => event.type)).toEqual(
      expect.arrayContaining(["message.user", "tool.call", "tool.state", "message.part.delta"]),
    );

    const conversation = await bridge.json<{
      id: string;
      messages: { role: string; content: string; status: string; task_id: string; tool?: string }[];
    }>(`/api/v1/conversations/${sessionId}`);
    expect(conversation.id).toBe(sessionId);
    expect(conversation.messages.map((message) => [message.role, message.status])).toEqual([
      ["user", "completed"],
      ["tool", "completed"],
      ["assistant", "completed"],
    ]);
    expect(conversation.messages[0].content).toBe("Read a.txt please");
    expect(conversation.messages[1].tool).toBe("read_file");
    expect(conversation.messages[2].content).toBe("Done reading.");
    expect(conversation.messages.every((message) => message.task_id === taskId)).toBe(true);
    expect((await bridge.api("/api/v1/conversations/nope")).status).toBe(404);
  });

  it("marks an answer cut by a cancel with the task's outcome", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "a very long answer that never ends", chunkSize: 2, delayMs: 200 });
    const streaming = bridge.chat({ message: "talk", session_id: sessionId });
    await waitFor(
      async () =>
        (await bridge.json<{ type: string }[]>(`/api/v1/sessions/${sessionId}/events`)).some(
          (event) => event.type === "message.part.delta",
        ),
      10_000,
      "a text delta",
    );
    await bridge.api(`/api/v1/sessions/${sessionId}/cancel`, { method: "POST" });
    const events = await streaming;
    expect(events.at(-1)!.data.outcome).toBe("cancelled");
    const conversation = await bridge.json<{ messages: { role: string; status: string }[] }>(
      `/api/v1/conversations/${sessionId}`,
    );
    expect(conversation.messages.find((message) => message.role === "assistant")?.status).toBe("cancelled");
  });
});

describe("GET /api/v1/audit/commands", () => {
  it("lists shell commands the agent ran, newest first, with risk, action type, approval and exit code, secrets redacted", async () => {
    const sessionId = await bridge.createSession({ yolo: true });
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "echo password=hunter2hunter2 > /dev/null; exit 3" } }] },
      { toolCalls: [{ name: "shell", arguments: { command: "ls" } }] },
      { text: "ran them" },
    );
    await bridge.chat({ message: "run things", session_id: sessionId });
    const audit = await bridge.json<
      {
        command: string;
        risk_level: string;
        action_type: string;
        approved: boolean;
        exit_code: number | null;
        session_id: string;
        task_id: string;
      }[]
    >(`/api/v1/audit/commands?session_id=${sessionId}`);
    expect(audit.map((row) => row.command)).toEqual(["ls", expect.stringContaining("password=[REDACTED]")]);
    expect(JSON.stringify(audit)).not.toContain("hunter2hunter2");
    expect(audit[0]).toMatchObject({ approved: true, exit_code: 0, session_id: sessionId, action_type: "read_only" });
    expect(audit[1].exit_code).toBe(3);
    expect(typeof audit[1].risk_level).toBe("string");
  });
});
