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
