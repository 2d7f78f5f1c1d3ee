import { afterAll, beforeAll, expect, it, onTestFinished, vi } from "vitest";
import type { EventEnvelope } from "../../../server/protocol";
import * as store from "../../../server/store";
import { testDatabaseUrl } from "../../db";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { waitFor } from "../../support/wait";
import { startAgentBridge, type AgentBridge } from "../agent/harness";

/**
 * A running turn whose session is taken over by another bridge (ARCHITECTURE.md, "Fencing"): the
 * takeover here is the real claim statement, run on a second connection to the same database.
 * And a rewind while the session's turn runs on another bridge: that bridge is the second
 * connection appending the turn's events.
 */
let fake: FakeLlm;
let bridge: AgentBridge;
let peer: store.Db;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url);
  ({ db: peer } = await store.openDb(bridge.home, testDatabaseUrl(bridge.home)));
});

afterAll(async () => {
  await peer?.$disconnect();
  await bridge?.close();
  await fake?.close();
});

it("a turn whose claim was taken over stops at once, appends no event after the takeover and says so once", async () => {
  const errors = vi.spyOn(console, "error");
  try {
    const sessionId = await bridge.createSession();
    fake.script({ text: "a long answer that keeps streaming ".repeat(20), chunkSize: 3, delayMs: 30 });
    // Started through the API, and left: its stream waits for a turn.completed this bridge will not write.
    const leave = new AbortController();
    void fetch(`${bridge.url}/api/v1/chat/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${bridge.token}`, "content-type": "application/json" },
      body: JSON.stringify({ session_id: sessionId, message: "talk" }),
      signal: leave.signal,
    }).catch(() => undefined); // aborted below
    onTestFinished(() => leave.abort());
    const first = await bridge.waitForEvent(sessionId, (e) => e.type === "message.part.delta", "the first token");
    const turnId = (first.payload as { turnId: string }).turnId;
    await bridge.waitForEvent(
      sessionId,
      (e) => e.type === "session.updated" && (e.payload as { status?: string }).status === "running",
      "the session's running status",
    );
    const { claim } = await store.claimSession(peer, sessionId, "o-peer", ["o-peer"]);
    expect(claim?.epoch).toBe(2);
    // Everything of the turn stored so far committed before the takeover did.
    const before = await bridge.events(sessionId);
    await waitFor(() => !bridge.services.runtime.isRunning(sessionId), 10_000, "the turn to stop");
    const ofTurn = (events: EventEnvelope[]) =>
      events.filter((e) => (e.payload as { turnId?: string }).turnId === turnId);
    const after = await bridge.events(sessionId);
    expect(ofTurn(after)).toEqual(ofTurn(before));
    expect(after.map((e) => e.type)).not.toContain("turn.completed");
    const said = errors.mock.calls
      .map((call) => String(call[0]))
      .filter((line) => /no longer holds session/.test(line));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(turnId);
    // The turn's row is the new holder's (or a sweep's) to settle, not the stale bridge's.
    expect((await store.getTurn(peer, turnId))?.status).toBe("running");
    // Nor the session's status: once the stale turn has finished (its status and claim writes
    // included), the row still says "running" and no `session.updated` followed the takeover.
    await bridge.services.runtime.cancelAll();
    expect((await peer.session.findUnique({ where: { id: sessionId } }))?.status).toBe("running");
    const settled = await bridge.events(sessionId);
    expect(settled.slice(before.length).map((e) => e.type)).not.toContain("session.updated");
  } finally {
    errors.mockRestore();
  }
});

it("refuses a rewind with session:busy while the session's turn runs on another bridge, and rewinds once it ended", async () => {
  const sessionId = await bridge.createSession();
  fake.script({ text: "first answer" });
  await bridge.chat(sessionId, "first");
  const [first] = (await (await bridge.api(`/api/v1/sessions/${sessionId}/checkpoints`)).json()) as { id: string }[];
  const historyBefore = await store.readHistory(peer, sessionId);

  // Another bridge starts a turn in the session.
  const appendOnPeer = async (type: string, payload: Record<string, unknown>) => {
    const seq = (await store.lastEventSeqs(peer, [sessionId])).get(sessionId)! + 1;
    await store.insertEvents(peer, [
      { sessionId, seq, type, payload: JSON.stringify(payload), turnId: "turn_peer", createdAt: new Date() },
    ]);
  };
  await appendOnPeer("turn.started", { turnId: "turn_peer", number: 2, prompt: "elsewhere" });

  const refused = await bridge.api(`/api/v1/sessions/${sessionId}/rewind`, {
    checkpoint: first.id,
    conversation: true,
  });
  expect(refused.status).toBe(409);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("session:busy");
  expect(await store.readHistory(peer, sessionId)).toEqual(historyBefore);

  await appendOnPeer("turn.completed", { turnId: "turn_peer", outcome: "completed" });
  const rewound = await bridge.api(`/api/v1/sessions/${sessionId}/rewind`, {
    checkpoint: first.id,
    conversation: true,
  });
  expect(rewound.status).toBe(200);
  expect((await store.readHistory(peer, sessionId)).length).toBeLessThan(historyBefore.length);
});
