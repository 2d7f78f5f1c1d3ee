import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { waitFor } from "../helpers";
import { completedOutcomes, startAgentBridge, type AgentBridge } from "../agent/harness";

/**
 * The audit log tells the truth about shell commands: a denied or rejected one is recorded
 * with `approved: false` and the rule or person that decided, an approved one with who approved it.
 */
let fake: FakeLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url);
});
afterEach(() => fake.reset());
afterAll(async () => {
  await bridge.close();
  await fake.close();
});

interface AuditRow {
  command: string;
  approved: boolean;
  decided_by: string | null;
  session_id: string | null;
}

async function auditOf(sessionId: string): Promise<AuditRow[]> {
  return (await (await bridge.api(`/api/v1/audit/commands?session_id=${sessionId}`)).json()) as AuditRow[];
}

async function sessionWith(yolo: boolean): Promise<string> {
  const response = await bridge.api("/api/v1/sessions", { workspace: bridge.workspace, yolo });
  return ((await response.json()) as { id: string }).id;
}

describe("shell audit records who decided", () => {
  it("records a command a deny rule blocked as not approved, naming the rule", async () => {
    const sessionId = await sessionWith(true);
    const rule = await bridge.api("/api/v1/rules", {
      tool: "shell",
      pattern: "rm *",
      action: "deny",
      scope: "session",
      session_id: sessionId,
    });
    expect(rule.status).toBeLessThan(300);
    fake.script({ toolCalls: [{ name: "shell", arguments: { command: "rm -rf build" } }] }, { text: "ok" });
    await bridge.chat(sessionId, "clean");
    expect(await auditOf(sessionId)).toEqual([
      expect.objectContaining({
        command: "rm -rf build",
        approved: false,
        decided_by: "rule: session deny shell rm *",
      }),
    ]);
  });

  it("records a command a person rejected as not approved, naming who", async () => {
    const sessionId = await sessionWith(false);
    fake.script({ toolCalls: [{ name: "shell", arguments: { command: "touch made-by-agent" } }] }, { text: "ok" });
    const chat = bridge.chat(sessionId, "make a file");
    const approval = await waitFor(
      async () => {
        const pending = (await (await bridge.api("/api/v1/approvals")).json()) as {
          approval_id: string;
          session_id: string;
        }[];
        return pending.find((item) => item.session_id === sessionId);
      },
      10_000,
      "the approval request",
    );
    const decided = await bridge.api(`/api/v1/approvals/${approval.approval_id}`, { decision: "reject" });
    expect(decided.status).toBe(200);
    await chat;
    await waitFor(
      async () => completedOutcomes(await bridge.events(sessionId)).length > 0,
      10_000,
      "the turn to end after the rejection",
    );
    expect(await auditOf(sessionId)).toEqual([
      expect.objectContaining({ command: "touch made-by-agent", approved: false, decided_by: "http" }),
    ]);
  });

  it("records an approved command with who approved it", async () => {
    const sessionId = await sessionWith(true);
    fake.script({ toolCalls: [{ name: "shell", arguments: { command: "touch yolo-file" } }] }, { text: "ok" });
    await bridge.chat(sessionId, "make a file");
    expect(await auditOf(sessionId)).toEqual([
      expect.objectContaining({ command: "touch yolo-file", approved: true, decided_by: "yolo" }),
    ]);
  });
});
