import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyEvents, emptyTranscript } from "../../../server/protocol";
import { startTestBridge, type TestBridge } from "../helpers";

/**
 * An external agent that names its tool calls and gives their commands only in later
 * `tool_call_update`s, and reports token usage only in the prompt response (as opencode does):
 * both reach the transcript and the turn's stats.
 */
const SCRIPTED_AGENT = path.join(import.meta.dirname, "fixtures/scripted-agent.mjs");
const AGENT_COMMAND = `${JSON.stringify(process.execPath)} ${JSON.stringify(SCRIPTED_AGENT)}`;

let bridge: TestBridge;

beforeAll(async () => {
  bridge = await startTestBridge();
});
afterAll(() => bridge?.stop());

describe("an external agent's late details", () => {
  it("shows the title and command of a tool_call_update and counts the usage of the prompt response", async () => {
    const created = await bridge.api("/api/v1/sessions", {
      body: { workspace: bridge.workspace, agentCommand: AGENT_COMMAND, yolo: true },
    });
    const { id } = (await created.json()) as { id: string };
    const started = await bridge.services.runtime.prompt(id, "list the files");
    const result = await started.done;
    expect(result.outcome).toBe("completed");
    expect(result.stats.output_tokens).toBe(345);
    // Its total (1545 = input + output) says the 800 cache reads are part of the 1200 input tokens.
    expect(result.stats).toMatchObject({ input_tokens: 1200, cached_input_tokens: 800 });
    await bridge.services.log.flush();
    const events = await bridge.services.log.read(id, 0);
    const completed = events.find((e) => e.type === "turn.completed");
    expect(completed?.type === "turn.completed" && completed.payload.stats?.output_tokens).toBe(345);
    const transcript = applyEvents(emptyTranscript(), events);
    const tool = transcript.items.find((item) => item.kind === "tool");
    expect(tool).toMatchObject({
      name: "List the files",
      args: { command: "ls -la", cwd: "/work", description: "List the files" },
      state: "completed",
      output: "total 0",
    });
  });
});
