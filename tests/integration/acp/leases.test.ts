import fs from "node:fs/promises";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { startSyncBridge, type SyncBridge } from "../sync/support";
import { cliEnv, startAcp, tempDirs, type AcpProcess } from "./support";
import { waitFor } from "../../support/wait";

/**
 * The loss this guards against: an editor's `worldline acp` turn waited on a permission, a web
 * bridge started on the same WORLDLINE_HOME and marked the turn and its request interrupted; the
 * web queue never listed it, and the editor's "allow" then ran nothing. With leases the web
 * bridge leaves a live owner's work alone, and sweeps it only once that owner is dead.
 */
let fake: FakeLlm;
let web: SyncBridge | undefined;
let proc: AcpProcess | undefined;

/** Short leases for the kill -9 case: an ACP child heartbeats every 300 ms, the web bridge waits 2 s. */
const LEASE = { ttlMs: 2_000, heartbeatMs: 300 };

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterEach(async () => {
  await proc?.stop();
  await web?.close();
  proc = undefined;
  web = undefined;
});
afterAll(async () => {
  await fake.close();
});

interface PendingView {
  approval_id: string;
  session_id: string;
  task_id: string;
  tool: string;
  status: string;
}

async function acpWaitingOnApproval(extraEnv: Record<string, string> = {}) {
  const dirs = await tempDirs();
  proc = startAcp({ cwd: dirs.workspace, env: cliEnv(dirs.home, fake.url, extraEnv) });
  await proc.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const { sessionId } = await proc.agent.request(acp.methods.agent.session.new, {
    cwd: dirs.workspace,
    mcpServers: [],
  });
  // The editor's user has not answered yet (and never will here): the turn waits.
  proc.permission.answer = () => new Promise<never>(() => undefined) as never;
  fake.script({ toolCalls: [{ name: "shell", arguments: { command: "echo ran >> ran.txt" } }] }, { text: "Appended." });
  const prompted = proc.agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "Append a line." }],
  });
  prompted.catch(() => undefined);
  const acpProc = proc;
  await waitFor(() => acpProc.permission.asked.length === 1, 20_000, "the ACP client asked for permission");
  return { ...dirs, sessionId, prompted };
}

describe("ownership by lease", () => {
  it("a web bridge started next to a waiting ACP turn lists its approval, and allowing it there runs the tool once", async () => {
    const { home, workspace, sessionId, prompted } = await acpWaitingOnApproval();
    web = await startSyncBridge(fake.url, { home, workspace });

    const pending = (await (await web.api("/api/v1/approvals?status=pending")).json()) as PendingView[];
    expect(pending).toEqual([expect.objectContaining({ session_id: sessionId, tool: "shell", status: "pending" })]);
    const [request] = pending;
    const task = await web.services.approvals.task(request.task_id);
    expect(task.status).not.toBe("interrupted");

    const decided = await web.api(`/api/v1/approvals/${request.approval_id}`, { body: { decision: "allow_once" } });
    expect(decided.status).toBe(200);
    // The first decision won: a second one, anywhere, is refused.
    const again = await web.api(`/api/v1/approvals/${request.approval_id}`, { body: { decision: "reject" } });
    expect(again.status).toBe(409);

    const response = await prompted;
    expect(response.stopReason).toBe("end_turn");
    expect(await fs.readFile(path.join(workspace, "ran.txt"), "utf8")).toBe("ran\n");

    // Honest record: the request approved on the web, the tool's result a success, the turn completed.
    const events = await web.events(sessionId);
    const types = events.map((event) => event.type);
    expect(types).not.toContain("notice");
    expect(events.find((event) => event.type === "approval.decided")?.payload).toMatchObject({
      approvalId: request.approval_id,
      status: "approved",
    });
    const result = events.find(
      (event) => event.type === "tool.state" && (event.payload as { state: string }).state === "completed",
    );
    expect(result).toBeDefined();
    expect(events.filter((event) => event.type === "turn.completed").map((event) => event.payload)).toEqual([
      expect.objectContaining({ outcome: "completed" }),
    ]);
  });

  it("after the ACP process is killed (kill -9), the web bridge takes its waiting turn over: the request stays pending, and allowing it there finishes that turn", async () => {
    const { home, workspace, sessionId } = await acpWaitingOnApproval({ WORLDLINE_HEARTBEAT_MS: "300" });
    web = await startSyncBridge(fake.url, { home, workspace, lease: LEASE });
    const pending = (await (await web.api("/api/v1/approvals?status=pending")).json()) as PendingView[];
    expect(pending).toHaveLength(1);

    fake.reset();
    fake.script({ text: "Taken over." });
    proc!.child.kill("SIGKILL");
    await proc!.exited;
    proc = undefined;
    const bridge = web;
    // The request is never interrupted: it stays pending while the ACP process's lease runs out.
    const still = (await (await bridge.api("/api/v1/approvals?status=pending")).json()) as PendingView[];
    expect(still.map((request) => request.approval_id)).toEqual([pending[0].approval_id]);
    // Until the web bridge has taken the turn over, a decision is refused (409 approval:owner_gone); then it is taken.
    const decided = await waitFor(
      async () => {
        const response = await bridge.api(`/api/v1/approvals/${pending[0].approval_id}`, {
          body: { decision: "allow_once" },
        });
        if (response.status === 200) return response;
        expect(response.status).toBe(409);
        return undefined;
      },
      15_000,
      "the request decided on the web bridge",
    );
    expect(decided.status).toBe(200);
    expect((await bridge.services.approvals.task(pending[0].task_id)).status).not.toBe("interrupted");
    await waitFor(
      async () => (await bridge.events(sessionId)).some((event) => event.type === "turn.completed"),
      15_000,
      "the same turn's end",
    );
    expect(await fs.readFile(path.join(workspace, "ran.txt"), "utf8")).toBe("ran\n");
    const ends = (await bridge.events(sessionId)).filter((event) => event.type === "turn.completed");
    expect(ends.map((event) => event.payload)).toEqual([expect.objectContaining({ outcome: "completed" })]);
  });
});
