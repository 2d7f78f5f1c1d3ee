import { afterAll, beforeAll, expect, it } from "vitest";
import * as store from "../../../server/store";
import { testDatabaseUrl } from "../../db";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { startAgentBridge, type AgentBridge } from "../agent/harness";

/**
 * A rewind rewrites a session's history and files: refused while a turn of the session runs in
 * another process (another bridge of the deployment), as for a turn running here. The other
 * process is a second connection to the same database appending the turn's events.
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
