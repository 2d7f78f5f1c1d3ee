import { describe, expect, it } from "vitest";
import { gateToolsForPlanMode, planModeVerdict, TurnPlanMode } from "../../../server/agent/plan-mode";
import type { EventEnvelope } from "../../../server/protocol";
import type { AgentTool } from "../../../server/agent/tools-port";
import type { ToolContext } from "../../../server/tools";

const ctx = { cwd: "/tmp", signal: new AbortController().signal, sessionId: "s", toolCallId: "c", emit: () => {} };

function fakeTool(name: string, ran: string[]): AgentTool {
  return {
    name,
    description: name,
    jsonSchema: {},
    needsApproval: async () => ({ level: "ask", subject: name, scope: name, description: name, risk: "medium" }),
    run: async (raw) => {
      ran.push(`${name} ${raw}`);
      return { output: "ran", isError: false };
    },
  };
}

describe("plan mode verdicts", () => {
  it("lets reads, searches and planning tools through", async () => {
    for (const tool of ["read_file", "glob", "grep", "list_dir", "todo", "propose_plan", "task"]) {
      expect(await planModeVerdict(tool, {})).toEqual({ allowed: true });
    }
  });

  it("runs shell lines the classifier rates read-only", async () => {
    expect(await planModeVerdict("shell", { command: "ls -la src" })).toEqual({ allowed: true });
    expect(await planModeVerdict("shell", { command: "git log --oneline | head -5" })).toEqual({ allowed: true });
    expect(await planModeVerdict("shell", { command: "cat package.json" })).toEqual({ allowed: true });
  });

  it("refuses writes and other commands with a message that says to finish the plan", async () => {
    for (const [tool, args] of [
      ["write_file", { path: "a.txt", content: "x" }],
      ["str_replace", { path: "a.txt" }],
      ["mcp__github__create_issue", {}],
      ["shell", { command: "rm -rf build" }],
      ["shell", { command: "echo hi > out.txt" }],
      ["shell", { command: "npm install left-pad" }],
      ["shell", { command: "ls", background: true }],
    ] as const) {
      const verdict = await planModeVerdict(tool, args);
      expect(verdict.allowed, `${tool} ${JSON.stringify(args)}`).toBe(false);
      if (!verdict.allowed) {
        expect(verdict.reason).toContain("plan mode is on");
        expect(verdict.reason).toContain("propose_plan");
      }
    }
  });
});

describe("gateToolsForPlanMode", () => {
  it("refuses before the gate and never runs the tool while plan mode is on", async () => {
    const ran: string[] = [];
    let planning = true;
    const [write, read] = gateToolsForPlanMode(
      [fakeTool("write_file", ran), fakeTool("read_file", ran)],
      () => planning,
    );
    const need = await write.needsApproval('{"path":"a"}', ctx as ToolContext);
    expect(need.level).toBe("none"); // nobody is asked to approve a call that is refused anyway
    const refused = await write.run('{"path":"a"}', ctx as ToolContext);
    expect(refused.isError).toBe(true);
    expect(refused.output).toMatch(/^Refused: plan mode is on/);
    expect(await read.run('{"path":"a"}', ctx as ToolContext)).toMatchObject({ output: "ran" });
    expect(ran).toEqual(['read_file {"path":"a"}']);

    planning = false; // approved: the same turn's tools work again
    expect((await write.needsApproval('{"path":"a"}', ctx as ToolContext)).level).toBe("ask");
    expect(await write.run('{"path":"a"}', ctx as ToolContext)).toMatchObject({ output: "ran" });
  });
});

describe("TurnPlanMode", () => {
  it("starts from the session's mode and follows its session.updated events until the turn ends", () => {
    const listeners = new Set<(event: EventEnvelope) => void>();
    const log = {
      subscribe: (_sessionId: string, listener: (event: EventEnvelope) => void) => {
        listeners.add(listener);
        return () => void listeners.delete(listener);
      },
    };
    const updated = (payload: { mode?: "default" | "plan"; title?: string }): EventEnvelope => ({
      seq: 1,
      createdAt: "",
      type: "session.updated",
      payload,
    });
    const plan = new TurnPlanMode(log, "s1", false);
    expect(plan.active()).toBe(false);
    for (const listener of listeners) listener(updated({ mode: "plan" }));
    expect(plan.active()).toBe(true);
    for (const listener of listeners) listener(updated({ title: "renamed" }));
    expect(plan.active()).toBe(true);
    for (const listener of listeners) listener(updated({ mode: "default" }));
    expect(plan.active()).toBe(false);
    plan.close();
    expect(listeners.size).toBe(0);
  });
});
