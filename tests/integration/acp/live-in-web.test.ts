import fs from "node:fs/promises";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ack, ApprovalChange, EventEnvelope } from "../../../server/protocol";
import { EventLog } from "../../../server/sessions";
import * as store from "../../../server/store";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { uniqueId } from "../helpers";
import { comparable, startSyncBridge, SyncClient, type SyncBridge } from "../sync/support";
import { cliEnv, startAcp, tempDirs, type AcpProcess } from "./support";
import { waitFor } from "../../support/wait";
import { testDatabaseUrl } from "../../db";

/**
 * `worldline acp` (a child process with its own in-process bridge) and a web bridge
 * (`npm start`, here in the test process) on the same WORLDLINE_HOME: the ACP session's
 * turn shows live in a web tab, its approval is on the web bridge's queue and is decided
 * there, and the ACP turn continues.
 */
let fake: FakeLlm;
let web: SyncBridge;
let proc: AcpProcess;
let workspace: string;
let sessionId: string;
let tab: SyncClient;
let queue: Socket;
const changes: ApprovalChange[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  const dirs = await tempDirs();
  workspace = dirs.workspace;
  web = await startSyncBridge(fake.url, { home: dirs.home, workspace });
  proc = startAcp({ cwd: workspace, env: cliEnv(dirs.home, fake.url) });
  await proc.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  sessionId = (await proc.agent.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] })).sessionId;
});

afterAll(async () => {
  tab?.close();
  queue?.disconnect();
  await proc?.stop();
  await web?.close();
  await fake?.close();
});

async function command<T>(socket: Socket, name: string, payload: Record<string, unknown>): Promise<Ack<T>> {
  return (await socket.timeout(10_000).emitWithAck(name, { commandId: uniqueId(), ...payload })) as Ack<T>;
}

describe("an ACP session in the web UI", () => {
  it("streams live to a web tab, and its approval is decided on the web bridge's queue", async () => {
    tab = new SyncClient(web.url, sessionId, { token: web.token });
    await waitFor(() => tab.subscribes > 0 && tab.lastSeq > 0, 10_000, "the tab's first subscribe");
    queue = io(web.url, { auth: { token: web.token }, transports: ["websocket"], forceNew: true });
    queue.on("approvals.changed", (change: ApprovalChange) => changes.push(change));
    const subscribed = await command<{ pending: unknown[] }>(queue, "approvals.subscribe", {});
    expect(subscribed).toMatchObject({ ok: true, data: { pending: [] } });

    // The ACP client never answers: the decision comes from the web bridge, and the question is withdrawn.
    proc.permission.answer = () => new Promise<never>(() => undefined) as never;
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "touch made-by-acp.txt" } }] },
      { text: "Made it." },
    );
    const prompted = proc.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Make the file." }],
    });

    // The request is on the web bridge: in the tab's live transcript, the HTTP queue and the /approvals socket.
    const requested = await waitFor(
      () => tab.applied.find((event) => event.type === "approval.requested"),
      15_000,
      "approval.requested in the web tab",
    );
    const approvalId = (requested.payload as { approvalId: string }).approvalId;
    const listed = (await (await web.api("/api/v1/approvals")).json()) as {
      approval_id: string;
      session_id: string;
      tool: string;
    }[];
    expect(listed).toEqual([
      expect.objectContaining({ approval_id: approvalId, session_id: sessionId, tool: "shell" }),
    ]);
    await waitFor(
      () => changes.some((change) => change.change === "requested" && change.approval.approval_id === approvalId),
      5_000,
      "approvals.changed requested",
    );
    await waitFor(() => proc.permission.asked.length === 1, 5_000, "the ACP client was asked too");

    // Another turn runs there: a prompt from the web tab is refused, clearly.
    const refused = await command(tab.socket, "turn.prompt", { sessionId, text: "me too" });
    expect(refused).toMatchObject({ ok: false, error: { code: "session:busy" } });
    expect(refused.ok ? "" : refused.error.message).toMatch(/another Worldline process/);

    const decided = await command<{ status: string }>(queue, "approval.decide", { approvalId, decision: "allow_once" });
    expect(decided).toMatchObject({ ok: true, data: { status: "approved" } });
    await waitFor(
      () => changes.some((change) => change.change === "decided" && change.approval.approval_id === approvalId),
      5_000,
      "approvals.changed decided",
    );

    const response = await prompted;
    expect(response.stopReason).toBe("end_turn");
    await fs.access(path.join(workspace, "made-by-acp.txt"));

    // The tab saw the whole turn live, in order, with the decision the ACP process recorded.
    await waitFor(
      () => tab.applied.some((event) => event.type === "turn.completed"),
      10_000,
      "turn.completed in the web tab",
    );
    const decidedEvent = tab.applied.find((event) => event.type === "approval.decided");
    expect(decidedEvent?.payload).toMatchObject({ approvalId, status: "approved", decidedBy: "web" });
    const stored = await web.events(sessionId);
    await waitFor(() => tab.lastSeq === stored.at(-1)?.seq, 5_000, "the tab at the log's end");
    expect(comparable(tab.applied)).toEqual(comparable(stored));
    expect(stored.map((event) => event.seq)).toEqual(stored.map((_, index) => index + 1));
    expect(tab.resets).toBe(0);
    expect(((await (await web.api("/api/v1/approvals")).json()) as unknown[]).length).toBe(0);
  });

  it("a turn prompted from the web tab reaches the ACP process's next turn, with no seq clash", async () => {
    fake.script({ text: "Web answer." });
    const started = await command<{ turnId: string }>(tab.socket, "turn.prompt", {
      sessionId,
      text: "asked from the web",
    });
    expect(started.ok).toBe(true);
    await waitFor(
      () => tab.applied.filter((event) => event.type === "turn.completed").length === 2,
      10_000,
      "the web turn's end",
    );

    // The ACP process catches up with the log and the model context before its next turn.
    const response = await proc.agent
      .request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "and now from the editor" }],
      })
      .catch((error: unknown) => {
        throw new Error(`${String(error)} ${JSON.stringify((error as { data?: unknown }).data)}\n${proc.stderr()}`);
      });
    expect(response.stopReason).toBe("end_turn");
    const lastRequest = JSON.stringify(fake.requests.at(-1));
    expect(lastRequest).toContain("asked from the web");
    expect(lastRequest).toContain("Web answer.");

    await waitFor(
      () => tab.applied.filter((event) => event.type === "turn.completed").length === 3,
      10_000,
      "the ACP turn's end in the tab",
    );
    const stored = await web.events(sessionId);
    await waitFor(() => tab.lastSeq === stored.at(-1)?.seq, 5_000, "the tab at the log's end");
    expect(comparable(tab.applied)).toEqual(comparable(stored));
    expect(stored.map((event) => event.seq)).toEqual(stored.map((_, index) => index + 1));
  });
});

describe("two processes' event logs on one database", () => {
  it("tail each other, and two appends at once get consecutive seqs that no listener ever sees change", async () => {
    const dirs = await tempDirs();
    const a = await store.openDb(dirs.home, testDatabaseUrl(dirs.home));
    const b = await store.openDb(dirs.home, testDatabaseUrl(dirs.home));
    const logA = new EventLog(a.db);
    const logB = new EventLog(b.db);
    try {
      const session = await store.createSession(a.db, { workspace: dirs.workspace });
      await Promise.all([logA.open(session.id), logB.open(session.id)]);
      const seenByA: EventEnvelope[] = [];
      const seenByB: EventEnvelope[] = [];
      logA.subscribe(session.id, (event) => seenByA.push(event));
      logB.subscribe(session.id, (event) => seenByB.push(event));
      const heard = (events: EventEnvelope[]) =>
        events.map((event) => [event.seq, (event.payload as { text: string }).text]);

      // Both append before either has written: both think seq 1 is next; the insert decides.
      logA.append(session.id, { type: "notice", payload: { level: "info", text: "from A" } });
      logB.append(session.id, { type: "notice", payload: { level: "info", text: "from B" } });
      await Promise.all([logA.flush(), logB.flush()]);
      const rows = await store.readEvents(a.db, session.id, 0);
      expect(rows.map((row) => row.seq)).toEqual([1, 2]);
      expect(rows.map((row) => JSON.parse(row.payload).text).sort()).toEqual(["from A", "from B"]);
      await waitFor(() => seenByA.length === 2 && seenByB.length === 2, 5_000, "both logs hearing both events");
      const stored = rows.map((row) => [row.seq, JSON.parse(row.payload).text]);
      expect(heard(seenByA)).toEqual(stored);
      expect(heard(seenByB)).toEqual(stored);

      // B streams; A (listening, idle) tails it in order and appends after it.
      for (let i = 0; i < 5; i++)
        logB.append(session.id, { type: "notice", payload: { level: "info", text: `B ${i}` } });
      await logB.flush();
      await waitFor(() => seenByA.length === 7, 5_000, "A tailing B");
      expect(seenByA.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      logA.append(session.id, { type: "notice", payload: { level: "info", text: "A after B" } });
      await logA.flush();
      const all = await store.readEvents(a.db, session.id, 0);
      expect(all.map((row) => row.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(JSON.parse(all[7].payload).text).toBe("A after B");
      await waitFor(() => seenByB.length === 8, 5_000, "B tailing A");
      expect(heard(seenByB)).toEqual(heard(seenByA));
    } finally {
      await logA.close();
      await logB.close();
      await a.db.$disconnect();
      await b.db.$disconnect();
    }
  });
});
