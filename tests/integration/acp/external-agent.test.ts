import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope } from "../../../server/protocol";
import { externalAgentSession, startTestBridge, waitFor, type TestBridge } from "../helpers";

const TINY_AGENT = path.join(import.meta.dirname, "fixtures/tiny-agent.mjs");
const AGENT_COMMAND = `${JSON.stringify(process.execPath)} ${JSON.stringify(TINY_AGENT)}`;

let bridge: TestBridge;

beforeAll(async () => {
  bridge = await startTestBridge();
});
afterAll(() => bridge?.stop());

function createExternalSession(): Promise<string> {
  return externalAgentSession(bridge, AGENT_COMMAND);
}

async function eventsOf(sessionId: string): Promise<EventEnvelope[]> {
  return bridge.services.log.read(sessionId, 0);
}

async function approvalRequest(sessionId: string): Promise<Extract<EventEnvelope, { type: "approval.requested" }>> {
  const found = await waitFor(
    async () => (await eventsOf(sessionId)).find((e) => e.type === "approval.requested"),
    20_000,
    "the approval request",
  );
  if (found?.type !== "approval.requested") throw new Error("no approval request");
  return found;
}

describe("a session backed by an external ACP agent", () => {
  it("renders its updates, queues its permission request and serves its file and terminal requests", async () => {
    const sessionId = await createExternalSession();
    const { done } = await bridge.services.runtime.prompt(sessionId, "make the file");

    const requested = await approvalRequest(sessionId);
    expect(requested.payload.tool).toBe("Write tiny.txt");
    const pending = await (await bridge.api("/api/v1/approvals?status=pending")).json();
    expect(JSON.stringify(pending)).toContain(requested.payload.approvalId);
    await bridge.services.approvals.decide(requested.payload.approvalId, { decision: "allow_once", decidedBy: "test" });

    expect((await done).outcome).toBe("completed");
    expect(await fs.readFile(path.join(bridge.workspace, "tiny.txt"), "utf8")).toBe("made by tiny-agent\n");
    const events = await eventsOf(sessionId);
    const text = (part: string) =>
      events
        .filter((e) => e.type === "message.part.delta" && e.payload.part === part)
        .map((e) => (e.type === "message.part.delta" ? e.payload.delta : ""))
        .join("");
    expect(text("reasoning")).toBe("Planning the file.");
    expect(text("text")).toBe("Done: make the file");
    expect(events.find((e) => e.type === "tool.call")?.payload).toMatchObject({
      toolCallId: "t1",
      name: "Write tiny.txt",
      args: { path: "tiny.txt" },
    });
    const finished = events.find((e) => e.type === "tool.state" && e.payload.state === "completed");
    expect(finished?.payload).toMatchObject({ toolCallId: "t1" });
    expect(JSON.stringify(finished?.payload)).toContain(
      "read back: made by tiny-agent; terminal: made by tiny-agent | from-terminal",
    );
    const plans = events.filter((e) => e.type === "todo.updated");
    expect(plans.at(-1)?.payload).toEqual({ items: [{ title: "write tiny.txt", status: "done" }] });
  });

  it("passes a rejection back to the agent", async () => {
    const sessionId = await createExternalSession();
    const { done } = await bridge.services.runtime.prompt(sessionId, "try again");
    const requested = await approvalRequest(sessionId);
    await bridge.services.approvals.decide(requested.payload.approvalId, {
      decision: "reject",
      feedback: "not now",
      decidedBy: "test",
    });
    expect((await done).outcome).toBe("completed");
    const events = await eventsOf(sessionId);
    expect(events.find((e) => e.type === "tool.state" && e.payload.state === "error")?.payload).toMatchObject({
      toolCallId: "t1",
      output: "rejected",
    });
  });

  it("refuses its permission requests in plan mode without asking anyone", async () => {
    const sessionId = await createExternalSession();
    await bridge.services.sessions.update(sessionId, { mode: "plan" });
    await fs.rm(path.join(bridge.workspace, "tiny.txt"), { force: true });
    const { done } = await bridge.services.runtime.prompt(sessionId, "make the file in plan mode");
    expect((await done).outcome).toBe("completed");
    const events = await eventsOf(sessionId);
    expect(events.some((e) => e.type === "approval.requested")).toBe(false);
    expect(events.find((e) => e.type === "tool.state" && e.payload.state === "error")?.payload).toMatchObject({
      toolCallId: "t1",
      output: "rejected",
    });
    await expect(fs.access(path.join(bridge.workspace, "tiny.txt"))).rejects.toThrow();
  });

  it("cancels the external agent's turn", async () => {
    const sessionId = await createExternalSession();
    const { done } = await bridge.services.runtime.prompt(sessionId, "wait for me");
    await waitFor(
      async () => (await eventsOf(sessionId)).some((e) => e.type === "message.part.delta"),
      20_000,
      "the agent to start",
    );
    await bridge.services.runtime.cancel(sessionId);
    expect((await done).outcome).toBe("cancelled");
  });
});
