import * as acp from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { startTestBridge, type TestBridge } from "../helpers";
import { startAcp, textOf, updatesOf, type AcpProcess } from "../acp/support";

let fake: FakeLlm;
let hub: TestBridge;
const procs: AcpProcess[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  hub = await startTestBridge({ llmUrl: fake.url });
  await hub.services.people.addUser({ name: "mia", role: "member", password: "mia-password-1" });
  await hub.services.people.addUser({ name: "val", role: "viewer", password: "val-password-1" });
});
afterAll(async () => {
  for (const proc of procs) await proc.stop();
  await hub?.stop();
  await fake?.close();
});

async function tokenOf(name: string): Promise<string> {
  const user = (await hub.services.people.listUsers()).find((candidate) => candidate.name === name)!;
  return (await hub.services.people.createApiToken(user.id, { name: "acp" })).token;
}

function acpOnHub(token: string): AcpProcess {
  const { PORT: _port, WORLDLINE_TOKEN: _token, ...env } = process.env;
  const proc = startAcp({ cwd: hub.workspace, env: { ...env, WORLDLINE_API_TOKEN: token }, args: ["--hub", hub.url] });
  procs.push(proc);
  return proc;
}

async function initialize(proc: AcpProcess) {
  return proc.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
}

describe("worldline acp --hub with a personal token", () => {
  it("runs a turn on the hub as the token's person, asking the client for approvals", async () => {
    const proc = acpOnHub(await tokenOf("mia"));
    expect((await initialize(proc)).agentInfo?.title).toBe("Worldline (hub)");
    const { sessionId } = await proc.agent.request(acp.methods.agent.session.new, {
      cwd: hub.workspace,
      mcpServers: [],
    });
    // The session is mia's on the hub.
    expect(await hub.services.people.listAccess(sessionId)).toEqual([{ subject: "mia", access: "owner" }]);

    fake.script({ toolCalls: [{ name: "shell", arguments: { command: "touch from-acp.txt" } }] }, { text: "made it" });
    const result = await proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "make a file" }],
    });
    expect(result.stopReason).toBe("end_turn");
    expect(proc.permission.asked).toHaveLength(1);
    expect(textOf(updatesOf(proc.updates, sessionId, "agent_message_chunk"))).toContain("made it");
    expect(updatesOf(proc.updates, sessionId, "tool_call").map((call) => call.toolCallId)).toHaveLength(1);
    const decided = (await (await hub.api(`/api/v1/approvals?status=decided&session_id=${sessionId}`)).json()) as {
      decided_by: string;
    }[];
    expect(decided.map((approval) => approval.decided_by)).toEqual(["mia"]);

    // Another editor of mia's lists and loads the session, with its conversation replayed.
    const again = acpOnHub(await tokenOf("mia"));
    await initialize(again);
    const listed = await again.agent.request(acp.methods.agent.session.list, { cwd: hub.workspace });
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
    await again.agent.request(acp.methods.agent.session.load, { sessionId, cwd: hub.workspace, mcpServers: [] });
    expect(textOf(updatesOf(again.updates, sessionId, "user_message_chunk"))).toContain("make a file");
    expect(textOf(updatesOf(again.updates, sessionId, "agent_message_chunk"))).toContain("made it");
    // A viewer's editor does not even see it.
    const viewer = acpOnHub(await tokenOf("val"));
    await initialize(viewer);
    const theirs = await viewer.agent.request(acp.methods.agent.session.list, {});
    expect(theirs.sessions.map((s) => s.sessionId)).not.toContain(sessionId);
    await expect(
      viewer.agent.request(acp.methods.agent.session.load, { sessionId, cwd: hub.workspace, mcpServers: [] }),
    ).rejects.toThrow();
  });

  it("a viewer's token cannot start a session; a wrong token is refused at initialize", async () => {
    const viewer = acpOnHub(await tokenOf("val"));
    await initialize(viewer);
    await expect(
      viewer.agent.request(acp.methods.agent.session.new, { cwd: hub.workspace, mcpServers: [] }),
    ).rejects.toThrow(/403|viewer/);

    const stranger = acpOnHub("wlp_not-a-real-token");
    await expect(initialize(stranger)).rejects.toThrow(/refused the connection/);
  });
});
