import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { plainText } from "../../support/model-text";
import type { EventEnvelope } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { startTestBridge, type TestBridge } from "../helpers";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const TSX = path.join(ROOT, "node_modules/.bin/tsx");
const SERVER = path.join(ROOT, "tests/integration/tools/fixtures/mcp-stdio-server.ts");

let fake: FakeLlm;
let bridge: TestBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(async () => {
  fake.reset();
  bridge = await startTestBridge({ llmUrl: fake.url });
});
afterEach(async () => {
  await bridge?.stop();
});

async function writeMcpConfig(dir: string, servers: Record<string, unknown>): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
}

async function createSession(yolo = false): Promise<string> {
  const response = await bridge.api("/api/v1/sessions", { body: { workspace: bridge.workspace, yolo } });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

async function turn(sessionId: string, prompt: string) {
  const before = (await bridge.services.log.read(sessionId, 0)).at(-1)?.seq ?? 0;
  const started = await bridge.services.runtime.prompt(sessionId, prompt);
  const result = await started.done;
  await bridge.services.log.flush();
  // This turn's events (and notices from outside turns meanwhile).
  const events = await bridge.services.log.read(sessionId, before);
  return { result, events };
}

const notices = (events: EventEnvelope[]) =>
  events.flatMap((event) => (event.type === "notice" ? [event.payload.text] : []));
const toolNames = (request: FakeLlm["requests"][number]) =>
  ((request.body.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
const toolMessages = (request: FakeLlm["requests"][number]) =>
  (request.body.messages as { role: string; content: string }[])
    .filter((message) => message.role === "tool")
    .map((message) => plainText(message.content));

async function mcpStatus(sessionId: string) {
  const response = await bridge.api(`/api/v1/sessions/${sessionId}/mcp`);
  expect(response.status).toBe(200);
  return (await response.json()) as {
    servers: { name: string; state: string; toolCount: number; source: string; error?: string }[];
    errors: string[];
  };
}

describe("MCP servers in sessions", () => {
  it("starts the workspace's servers on the first turn, offers their tools and calls them through the approval gate", async () => {
    await writeMcpConfig(path.join(bridge.workspace, ".worldline"), { tester: { command: TSX, args: [SERVER] } });
    const sessionId = await createSession();
    expect((await mcpStatus(sessionId)).servers).toEqual([
      { name: "tester", transport: "stdio", state: "idle", toolCount: 0, source: "workspace" },
    ]);

    fake.script(
      { toolCalls: [{ name: "tester__echo", arguments: { text: "ping" } }] },
      { text: "The server said ping." },
    );
    const approvals: string[] = [];
    const unsubscribe = bridge.services.log.subscribe(sessionId, (event) => {
      if (event.type !== "approval.requested") return;
      approvals.push(event.payload.tool);
      void bridge.services.approvals.decide(event.payload.approvalId, { decision: "allow_once", decidedBy: "test" });
    });
    const { result } = await turn(sessionId, "Echo ping through MCP.");
    unsubscribe();

    expect(result.outcome).toBe("completed");
    expect(approvals).toEqual(["tester__echo"]);
    expect(toolNames(fake.requests[0])).toEqual(
      expect.arrayContaining(["read_file", "shell", "tester__echo", "tester__fail"]),
    );
    expect(toolMessages(fake.requests[1])).toEqual(["echo: ping"]);
    expect((await mcpStatus(sessionId)).servers).toEqual([
      { name: "tester", transport: "stdio", state: "ready", toolCount: 4, source: "workspace" },
    ]);
  });

  it("reports a server that fails to start as a notice, and the turn still completes with the other tools", async () => {
    await writeMcpConfig(bridge.home, { broken: { command: "/nonexistent/mcp-server" } });
    await writeMcpConfig(path.join(bridge.workspace, ".worldline"), { tester: { command: TSX, args: [SERVER] } });
    const sessionId = await createSession(true);
    fake.script({ toolCalls: [{ name: "tester__echo", arguments: { text: "still here" } }] }, { text: "ok" });

    const { result, events } = await turn(sessionId, "Go.");

    expect(result.outcome).toBe("completed");
    expect(notices(events).some((text) => text.startsWith('MCP server "broken" failed to start'))).toBe(true);
    expect(toolNames(fake.requests[0])).toContain("tester__echo");
    expect(toolNames(fake.requests[0]).some((name) => name.startsWith("broken__"))).toBe(false);
    expect(toolMessages(fake.requests[1])).toEqual(["echo: still here"]);
    const status = await mcpStatus(sessionId);
    expect(status.servers.find((server) => server.name === "broken")).toMatchObject({
      state: "failed",
      source: "workspace",
    });

    // Told once per session, not at every turn.
    const second = await turn(sessionId, "Again.");
    expect(notices(second.events).filter((text) => text.includes('"broken"'))).toHaveLength(0);
  });

  it("a broken config file is a notice, not a failure", async () => {
    await fs.mkdir(path.join(bridge.workspace, ".worldline"), { recursive: true });
    await fs.writeFile(path.join(bridge.workspace, ".worldline", "mcp.json"), "{ not json");
    const sessionId = await createSession();
    const { result, events } = await turn(sessionId, "Hello.");
    expect(result.outcome).toBe("completed");
    expect(notices(events).some((text) => text.includes("mcp.json: not valid JSON"))).toBe(true);
    expect((await mcpStatus(sessionId)).errors[0]).toContain("not valid JSON");
  });

  it("a server that crashes mid-session is reported, the turn goes on, and the next turn starts it again", async () => {
    await writeMcpConfig(path.join(bridge.workspace, ".worldline"), { tester: { command: TSX, args: [SERVER] } });
    const sessionId = await createSession(true);
    fake.script({ toolCalls: [{ name: "tester__crash", arguments: {} }] }, { text: "done" });

    const first = await turn(sessionId, "Crash it.");
    expect(first.result.outcome).toBe("completed");
    // The crash notice arrives when the process exits (outside the tool call itself).
    await expect
      .poll(
        async () =>
          notices(await bridge.services.log.read(sessionId, 0)).some((text) =>
            text.startsWith('MCP server "tester" stopped'),
          ),
        { timeout: 10_000 },
      )
      .toBe(true);

    fake.script({ toolCalls: [{ name: "tester__echo", arguments: { text: "back" } }] }, { text: "ok" });
    const second = await turn(sessionId, "Try again.");
    expect(second.result.outcome).toBe("completed");
    expect(toolMessages(fake.requests.at(-1)!).at(-1)).toBe("echo: back");
  });

  it("a turn waiting for a slow server says so, and cancelling it does not wait for the server", async () => {
    // `sleep` never answers MCP's initialize: the server would take the whole start timeout.
    await writeMcpConfig(path.join(bridge.workspace, ".worldline"), { sleepy: { command: "sleep", args: ["60"] } });
    const sessionId = await createSession();
    const started = await bridge.services.runtime.prompt(sessionId, "Hello.");
    await expect
      .poll(
        async () =>
          notices(await bridge.services.log.read(sessionId, 0)).some((text) =>
            text.startsWith("Starting MCP servers: sleepy"),
          ),
        { timeout: 5_000 },
      )
      .toBe(true);
    const before = Date.now();
    await bridge.services.runtime.cancel(sessionId);
    expect((await started.done).outcome).toBe("cancelled");
    expect(Date.now() - before).toBeLessThan(2_000);
    expect((await mcpStatus(sessionId)).servers[0]).toMatchObject({ name: "sleepy", state: "starting" });
  });

  it("shares one set of server processes between the sessions of a workspace and stops them with the bridge", async () => {
    await writeMcpConfig(path.join(bridge.workspace, ".worldline"), { tester: { command: TSX, args: [SERVER] } });
    const a = await createSession();
    const b = await createSession();
    await turn(a, "Hello A.");
    await turn(b, "Hello B.");
    expect((await mcpStatus(a)).servers[0].state).toBe("ready");
    expect((await mcpStatus(b)).servers[0].state).toBe("ready");
    const mcp = bridge.services.mcp!;
    await bridge.stop();
    expect((await mcp.status(a, bridge.workspace)).servers[0].state).not.toBe("ready");
  });
});
