import fs from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { plainText } from "../../support/model-text";
import type { FakeLlm } from "../../fake-llm/server";
import { messagesOf, useAgentBridge, type AgentBridge } from "./harness";

let fake: FakeLlm;
let bridge: AgentBridge;
useAgentBridge((started, running) => {
  fake = started;
  bridge = running;
});

const patch = (sessionId: string, body: unknown) =>
  fetch(`${bridge.url}/api/v1/sessions/${sessionId}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

function toolOutputs(request: { body: { messages: unknown } }): string[] {
  return messagesOf(request)
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));
}

describe("plan mode over HTTP", () => {
  it("PATCH {mode} switches it, GET shows it and every tab gets session.updated", async () => {
    const sessionId = await bridge.createSession();
    const response = await patch(sessionId, { mode: "plan" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ mode: "plan" });
    const read = (await (await bridge.api(`/api/v1/sessions/${sessionId}`)).json()) as { mode: string };
    expect(read.mode).toBe("plan");
    await bridge.waitForEvent(sessionId, (e) => e.type === "session.updated" && e.payload.mode === "plan");
    expect((await patch(sessionId, { mode: "reckless" })).status).toBe(400);
  });

  it("runs reads and read-only commands, refuses writes and other commands, even with yolo", async () => {
    await fs.writeFile(path.join(bridge.workspace, "app.txt"), "v1\n");
    const sessionId = await bridge.createSession(); // yolo: true, so nothing would ask
    fake.script(
      {
        toolCalls: [
          { name: "read_file", arguments: { path: "app.txt" } },
          { name: "shell", arguments: { command: "ls" } },
          { name: "write_file", arguments: { path: "app.txt", content: "v2\n" } },
          { name: "shell", arguments: { command: "touch made-in-plan-mode.txt" } },
        ],
      },
      { toolCalls: [{ name: "propose_plan", arguments: { plan: "1. Change app.txt to v2" } }] },
      { text: "Waiting for approval." },
    );
    const response = await bridge.api("/api/v1/chat/stream", {
      session_id: sessionId,
      message: "update app",
      mode: "plan",
    });
    expect(response.status).toBe(200);
    await response.text();

    const outputs = toolOutputs(fake.requests[1]);
    expect(outputs[0]).toContain("v1");
    expect(outputs[1]).toContain("app.txt");
    expect(outputs[2]).toMatch(/^Refused: plan mode is on/);
    expect(outputs[2]).toContain("propose_plan");
    expect(outputs[3]).toContain('rated "file_write"');
    expect(await fs.readFile(path.join(bridge.workspace, "app.txt"), "utf8")).toBe("v1\n");
    await expect(fs.access(path.join(bridge.workspace, "made-in-plan-mode.txt"))).rejects.toThrow();

    // The model was told once, with the prompt; the transcript shows the prompt alone.
    const user = messagesOf(fake.requests[0]).find(
      (m) => m.role === "user" && plainText(String(m.content)).startsWith("update app"),
    );
    expect(String(user?.content)).toContain("Plan mode is on");
    const events = await bridge.events(sessionId);
    const shown = events.find((e) => e.type === "message.user");
    expect(shown?.payload).toMatchObject({ text: "update app" });
    // The plan travels as the propose_plan call's display, for the plan card.
    const plan = events.find(
      (e) => e.type === "tool.state" && (e.payload.display as { plan?: string } | undefined)?.plan,
    );
    expect(plan?.payload).toMatchObject({ state: "completed", display: { plan: "1. Change app.txt to v2" } });

    // Approving the plan leaves plan mode: the same write now runs.
    await patch(sessionId, { mode: "default" });
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "app.txt", content: "v2\n" } }] },
      { text: "done" },
    );
    await bridge.chat(sessionId, "Approved: carry out the plan.");
    expect(await fs.readFile(path.join(bridge.workspace, "app.txt"), "utf8")).toBe("v2\n");
    const approved = messagesOf(fake.requests.at(-2)!).find((m) => plainText(String(m.content)).startsWith("Approved"));
    expect(String(approved?.content)).not.toContain("Plan mode is on");
  });
});
