import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Context } from "../../../server/agent/context";
import { runTurn } from "../../../server/agent/loop";
import type { AgentTool } from "../../../server/agent/tools-port";
import type { TurnRun } from "../../../server/agent/turn-run";
import type { SessionEvent } from "../../../server/protocol";
import { createSession, openDb, type Db } from "../../../server/store";
import { ScriptedModel } from "../../support/scripted-model";

/** A tool that adds two numbers and needs no approval. */
const add: AgentTool = {
  name: "add",
  description: "Adds a and b.",
  jsonSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
  needsApproval: async () => ({ level: "none", subject: "add", scope: "add", description: "add", risk: "none" }),
  run: async (raw) => {
    const { a, b } = JSON.parse(raw) as { a: number; b: number };
    return { output: String(a + b), isError: false };
  },
};

describe("runTurn with a scripted model", () => {
  let db: Db;
  let home: string;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-loop-"));
    ({ db } = await openDb(home));
  });

  afterAll(async () => {
    await db.$disconnect();
    fs.rmSync(home, { recursive: true, force: true });
  });

  async function turn(model: ScriptedModel, overrides: Partial<TurnRun> = {}) {
    const session = await createSession(db, { workspace: home });
    const events: SessionEvent[] = [];
    const result = await runTurn({
      sessionId: session.id,
      workspace: home,
      model: "scripted",
      prompt: "what is 2 + 3?",
      provider: model,
      context: await Context.load(db, session.id),
      systemPrompt: "You add numbers.",
      tools: [add],
      gate: { check: async () => ({ approved: true, decidedBy: "test" }) },
      emit: { turnId: "turn_1", event: (event) => void events.push(event) },
      signal: new AbortController().signal,
      retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
      maxSteps: 5,
      contextWindow: 100_000,
      ...overrides,
    });
    return { result, events };
  }

  it("runs the tool the model calls and sends its result back, then stops on the answer", async () => {
    const model = new ScriptedModel({ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, { text: "5" });
    const { result, events } = await turn(model);
    expect(result.outcome).toBe("completed");
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0].tools?.map((tool) => tool.function.name)).toEqual(["add"]);
    expect(model.requests[0].messages.at(0)).toMatchObject({ role: "system", content: "You add numbers." });
    const second = model.requests[1].messages;
    expect(second.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ function: { name: "add" } }] });
    expect(second.at(-1)).toMatchObject({ role: "tool", content: "5", tool_call_id: "call_1_0" });
    expect(events.some((event) => event.type === "tool.state" && event.payload.state === "completed")).toBe(true);
  });

  it("stops at maxSteps when the model never stops calling tools", async () => {
    const call = { toolCalls: [{ name: "add", arguments: { a: 1, b: 1 } }] };
    const model = new ScriptedModel(call, call, call);
    const { result } = await turn(model, { maxSteps: 2 });
    expect(model.requests).toHaveLength(2);
    expect(result).toMatchObject({ outcome: "max_steps", message: "Stopped after 2 steps." });
  });

  it("tells the model when the gate refuses a call, and goes on", async () => {
    const model = new ScriptedModel({ toolCalls: [{ name: "add", arguments: { a: 2, b: 2 } }] }, { text: "refused" });
    const { result } = await turn(model, {
      gate: { check: async () => ({ approved: false, feedback: "not now", decidedBy: "test" }) },
      tools: [
        {
          ...add,
          needsApproval: async () => ({ level: "ask", subject: "add", scope: "add", description: "add", risk: "low" }),
        },
      ],
    });
    expect(result.outcome).toBe("completed");
    const toolMessage = model.requests[1].messages.at(-1);
    expect(toolMessage).toMatchObject({ role: "tool" });
    expect(String((toolMessage as { content: unknown }).content)).toContain("not now");
  });
});
