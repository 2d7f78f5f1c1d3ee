import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { emitCommand, uniqueId, waitFor } from "../helpers";
import { io } from "socket.io-client";
import { completedOutcomes, messagesOf, plainMessages, startAgentBridge, type AgentBridge } from "./harness";

let fake: FakeLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url, { agent: { maxSteps: 6 } });
});
afterAll(async () => {
  await bridge.close();
  await fake.close();
});
afterEach(() => fake.reset());

async function socket() {
  const s = io(bridge.url, { auth: { token: bridge.token }, transports: ["websocket"], forceNew: true });
  await new Promise<void>((resolve, reject) => {
    s.once("connect", () => resolve());
    s.once("connect_error", reject);
  });
  return s;
}

function prompt(s: Awaited<ReturnType<typeof socket>>, sessionId: string, text: string) {
  return emitCommand<{ turnId: string; queued: boolean }>(s, "turn.prompt", { commandId: uniqueId(), sessionId, text });
}

async function waitForOutcomes(sessionId: string, count: number) {
  return waitFor(
    async () => {
      const outcomes = completedOutcomes(await bridge.events(sessionId));
      return outcomes.length >= count ? outcomes : undefined;
    },
    15_000,
    `${count} completed turns`,
  );
}

describe("cancel, steer, queue and guards", () => {
  it("cancels mid-stream and keeps the history consistent for the next turn", async () => {
    const sessionId = await bridge.createSession();
    const s = await socket();
    fake.script({ text: "a long answer that streams slowly", chunkSize: 2, delayMs: 100 });
    await prompt(s, sessionId, "talk");
    await bridge.waitForEvent(sessionId, (e) => e.type === "message.part.delta", "first delta");
    expect(await (await bridge.api(`/api/v1/sessions/${sessionId}/cancel`, {})).json()).toEqual({ cancelled: true });
    expect(completedOutcomes(await bridge.events(sessionId))).toEqual(["cancelled"]);
    fake.script({ text: "fresh" });
    await bridge.chat(sessionId, "again");
    const messages = plainMessages(fake.requests[1]);
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(String(messages[2].content).length).toBeGreaterThan(0);
    s.disconnect();
  });

  it("cancels mid-tool: every tool call gets a result", async () => {
    const sessionId = await bridge.createSession();
    const s = await socket();
    fake.script({ toolCalls: [{ name: "shell", arguments: { command: "sleep 30" } }] });
    await prompt(s, sessionId, "sleep");
    await bridge.waitForEvent(
      sessionId,
      (e) => e.type === "tool.state" && e.payload.state === "running",
      "tool running",
    );
    await emitCommand(s, "turn.cancel", { commandId: uniqueId(), sessionId });
    expect(completedOutcomes(await bridge.events(sessionId))).toEqual(["cancelled"]);
    fake.script({ text: "ok" });
    await bridge.chat(sessionId, "next");
    const messages = messagesOf(fake.requests[1]);
    const call = messages.find((m) => m.role === "assistant" && m.tool_calls);
    const result = messages.find((m) => m.role === "tool");
    expect(result?.tool_call_id).toBe((call?.tool_calls as { id: string }[])[0].id);
    expect(String(result?.content).toLowerCase()).toContain("cancel");
    s.disconnect();
  });

  it("injects a steering message before the next step", async () => {
    const sessionId = await bridge.createSession();
    const s = await socket();
    fake.script({ toolCalls: [{ name: "shell", arguments: { command: "sleep 1" } }] }, { text: "steered" });
    await prompt(s, sessionId, "work");
    await bridge.waitForEvent(
      sessionId,
      (e) => e.type === "tool.state" && e.payload.state === "running",
      "tool running",
    );
    const steer = await emitCommand<{ steered: boolean }>(s, "turn.steer", {
      commandId: uniqueId(),
      sessionId,
      text: "also check the README",
    });
    expect(steer.steered).toBe(true);
    await waitForOutcomes(sessionId, 1);
    const messages = plainMessages(fake.requests[1]);
    expect(messages.at(-1)?.role).toBe("user");
    expect(messages.some((m) => m.role === "user" && m.content === "also check the README")).toBe(true);
    const toolIndex = messages.findIndex((m) => m.role === "tool");
    const steerIndex = messages.findIndex((m) => m.content === "also check the README");
    expect(steerIndex).toBeGreaterThan(toolIndex);
    s.disconnect();
  });

  /** Steers the session the moment its turn's `turn.completed` is appended: after the loop, before the turn is done. */
  function steerLate(sessionId: string, text: string, before?: () => void): Promise<{ steered: boolean }> {
    // Listeners hear an event only once it is written, by then the turn is done: catch the append itself.
    const log = bridge.services.log;
    const append = log.append;
    return new Promise((resolve, reject) => {
      log.append = (id, event, turnId) => {
        append.call(log, id, event, turnId);
        if (id !== sessionId || event.type !== "turn.completed") return;
        log.append = append;
        before?.();
        bridge.services.runtime.steer(sessionId, text).then(resolve, reject);
      };
    });
  }

  it("turns steering that comes after the turn's last step into the next prompt", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "done" }, { text: "late one" });
    const late = steerLate(sessionId, "and one more thing");
    await bridge.chat(sessionId, "answer");
    expect((await late).steered).toBe(true);
    expect(await waitForOutcomes(sessionId, 2)).toEqual(["completed", "completed"]);
    const started = (await bridge.events(sessionId)).filter((e) => e.type === "turn.started");
    expect(started.map((e) => e.payload.prompt)).toEqual(["answer", "and one more thing"]);
  });

  it("tells the person when late steering cannot start a turn, with its text", async () => {
    const sessionId = await bridge.createSession();
    fake.script({ text: "done" });
    const log = bridge.services.log;
    const original = log.runningElsewhere.bind(log);
    // The late prompt is refused: by then the session looks busy in another process.
    const busyElsewhere = () =>
      (log.runningElsewhere = (id: string) => (id === sessionId ? "turn_elsewhere" : original(id)));
    try {
      const late = steerLate(sessionId, "do not drop me", busyElsewhere);
      await bridge.chat(sessionId, "answer");
      expect((await late).steered).toBe(true);
      const notice = await bridge.waitForEvent(
        sessionId,
        (e) => e.type === "notice" && e.payload.text.includes("do not drop me"),
        "notice with the late steering",
      );
      expect(notice.type === "notice" && notice.payload.level).toBe("warning");
      expect(completedOutcomes(await bridge.events(sessionId))).toEqual(["completed"]);
    } finally {
      log.runningElsewhere = original;
    }
  });

  it("queues a second prompt sent while a turn runs and runs it after", async () => {
    const sessionId = await bridge.createSession();
    const s = await socket();
    fake.script({ text: "first answer", chunkSize: 3, delayMs: 40 }, { text: "second answer" });
    const first = await prompt(s, sessionId, "first");
    const second = await prompt(s, sessionId, "second");
    expect(first.queued).toBe(false);
    expect(second.queued).toBe(true);
    expect(await waitForOutcomes(sessionId, 2)).toEqual(["completed", "completed"]);
    const messages = plainMessages(fake.requests[1]);
    expect(messages.map((m) => m.content)).toEqual([expect.any(String), "first", "first answer", "second"]);
    const events = await bridge.events(sessionId);
    expect(events.some((e) => e.type === "turn.queued" && e.payload.turnId === second.turnId)).toBe(true);
    s.disconnect();
  });

  it("deleting a session ends the prompts queued behind its running turn before they reach the model", async () => {
    const sessionId = await bridge.createSession();
    const s = await socket();
    const seen: { type: string; payload: Record<string, unknown> }[] = [];
    s.on("session.events", (message: { sessionId: string; events: typeof seen }) => {
      if (message.sessionId === sessionId) seen.push(...message.events);
    });
    await emitCommand(s, "session.subscribe", { commandId: uniqueId(), sessionId });
    fake.script({ text: "a long answer that streams slowly", chunkSize: 2, delayMs: 100 }, { text: "never asked" });
    await prompt(s, sessionId, "first");
    const second = await prompt(s, sessionId, "second");
    expect(second.queued).toBe(true);
    await waitFor(() => seen.some((e) => e.type === "message.part.delta"), 15_000, "the first answer streaming");
    const deleted = await fetch(`${bridge.url}/api/v1/sessions/${sessionId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${bridge.token}` },
    });
    expect(await deleted.json()).toEqual({ deleted: true });
    const ended = await waitFor(
      () => seen.find((e) => e.type === "turn.completed" && e.payload.turnId === second.turnId),
      15_000,
      "the queued turn's end",
    );
    expect(ended.payload).toMatchObject({ outcome: "cancelled" });
    expect(fake.requests).toHaveLength(1);
    s.disconnect();
  });

  it("warns the model about a repeated call, then stops the turn", async () => {
    const sessionId = await bridge.createSession();
    const same = { toolCalls: [{ name: "list_dir", arguments: { path: "." } }] };
    fake.script(same, same, same, same, { text: "never reached" });
    await bridge.chat(sessionId, "loop");
    expect(fake.requests).toHaveLength(4);
    const third = messagesOf(fake.requests[3]).filter((m) => m.role === "tool");
    expect(third.at(-1)?.content).toContain("[loop guard]");
    expect(third[0].content).not.toContain("[loop guard]");
    const events = await bridge.events(sessionId);
    expect(completedOutcomes(events)).toEqual(["loop_detected"]);
  });

  it("stops at the step limit", async () => {
    const sessionId = await bridge.createSession();
    for (let i = 0; i < 6; i++) fake.script({ toolCalls: [{ name: "list_dir", arguments: { path: `dir-${i}` } }] });
    await bridge.chat(sessionId, "go on forever");
    expect(fake.requests).toHaveLength(6);
    expect(completedOutcomes(await bridge.events(sessionId))).toEqual(["max_steps"]);
  });
});
