import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { TEST_TOKEN, emitCommand, uniqueId, waitFor } from "../helpers";
import { SyncClient, comparable, startSyncBridge, type SyncBridge } from "./support";

let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});

const longText = (words: number) => Array.from({ length: words }, (_, i) => `word${i}`).join(" ");

/** A streamed turn with several tool calls across steps, then a long answer. */
function scriptMultiToolTurn(tag: string): void {
  fake.script(
    {
      reasoning: `Looking around (${tag}).`,
      toolCalls: [
        { name: "glob", arguments: { pattern: "*" } },
        { name: "list_dir", arguments: { path: "." } },
      ],
    },
    { toolCalls: [{ name: "write_file", arguments: { path: `${tag}.txt`, content: longText(50) } }] },
    { toolCalls: [{ name: "read_file", arguments: { path: `${tag}.txt` } }] },
    { text: longText(400) },
  );
}

/** A turn's last event is the session's status back to idle, after its turn.completed (AgentRuntime's finish). */
async function turnDone(bridge: SyncBridge, sessionId: string, count: number): Promise<void> {
  await waitFor(
    async () => {
      const events = await bridge.events(sessionId);
      const completed = events.filter((e) => e.type === "turn.completed")[count - 1];
      return (
        completed &&
        events.some(
          (e) =>
            e.seq > completed.seq &&
            e.type === "session.updated" &&
            (e.payload as { status?: string }).status === "idle",
        )
      );
    },
    20_000,
    `turn ${count} completed and the session idle again`,
  );
}

/** Waits until every client has the whole log (call it once the turn is done: nothing is appended after). */
async function allCaughtUp(bridge: SyncBridge, sessionId: string, clients: SyncClient[]): Promise<void> {
  const last = (await bridge.events(sessionId)).at(-1)!.seq;
  await waitFor(
    () => clients.every((client) => client.lastSeq >= last && client.socket.connected),
    15_000,
    "every client at the last seq",
  );
}

describe("live sync across many tabs", () => {
  it("five tabs with random disconnects during a streamed multi-tool turn end with the identical event list", async () => {
    fake.reset();
    const bridge = await startSyncBridge(fake.url);
    try {
      await fs.writeFile(path.join(bridge.workspace, "readme.md"), "hello\n");
      const sessionId = await bridge.createSession();
      const clients = Array.from({ length: 5 }, () => new SyncClient(bridge.url, sessionId, { token: TEST_TOKEN }));
      await waitFor(
        () => clients.every((client) => client.socket.connected && client.subscribes > 0),
        10_000,
        "clients connected",
      );

      scriptMultiToolTurn("first");
      await emitCommand(clients[0].socket, "turn.prompt", {
        commandId: uniqueId(),
        sessionId,
        text: "look around and write a file",
      });
      // Drop random clients' connections (as a network loss would) while the turn streams.
      let drops = 0;
      const chaos = setInterval(() => {
        const victim = clients[1 + Math.floor(Math.random() * 4)];
        if (victim.socket.connected) {
          victim.socket.io.engine.close();
          drops++;
        }
      }, 15);
      await turnDone(bridge, sessionId, 1);
      clearInterval(chaos);
      await allCaughtUp(bridge, sessionId, clients);

      const truth = comparable(await bridge.events(sessionId));
      expect(truth.length).toBeGreaterThan(20);
      expect(truth.map((e) => e.seq)).toEqual(truth.map((_, i) => i + 1));
      expect(drops).toBeGreaterThan(0);
      for (const client of clients) {
        expect(comparable(client.applied)).toEqual(truth);
        expect(client.live.state.running).toBeNull();
      }
      const states = clients.map((client) => JSON.stringify(client.live.state));
      expect(new Set(states).size).toBe(1);
      for (const client of clients) client.close();
    } finally {
      await bridge.close();
    }
  });

  it("a bridge restart mid-session: tabs reconnect, resume from the database's seq, and stay identical", async () => {
    fake.reset();
    const first = await startSyncBridge(fake.url);
    const { home, workspace, port } = first;
    const sessionId = await first.createSession();
    const clients = Array.from({ length: 3 }, () => new SyncClient(first.url, sessionId, { token: TEST_TOKEN }));
    await waitFor(
      () => clients.every((client) => client.subscribes > 0 && client.socket.connected),
      10_000,
      "connected",
    );
    scriptMultiToolTurn("before");
    await emitCommand(clients[0].socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "first" });
    await turnDone(first, sessionId, 1);
    await allCaughtUp(first, sessionId, clients);
    const beforeRestart = clients[0].lastSeq;
    await first.close();

    const second = await startSyncBridge(fake.url, { home, workspace, port });
    try {
      await waitFor(
        () => clients.every((client) => client.socket.connected),
        15_000,
        "reconnected to the restarted bridge",
      );
      scriptMultiToolTurn("after");
      await emitCommand(clients[2].socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "second" });
      await turnDone(second, sessionId, 2);
      await allCaughtUp(second, sessionId, clients);
      const truth = comparable(await second.events(sessionId));
      expect(truth.at(-1)!.seq).toBeGreaterThan(beforeRestart);
      expect(truth.map((e) => e.seq)).toEqual(truth.map((_, i) => i + 1));
      for (const client of clients) {
        expect(client.resets).toBe(0);
        expect(comparable(client.applied)).toEqual(truth);
      }
      // A late tab on the same session gets the same thing.
      const late = new SyncClient(second.url, sessionId, { token: TEST_TOKEN });
      await allCaughtUp(second, sessionId, [late]);
      expect(JSON.stringify(late.live.state)).toBe(JSON.stringify(clients[0].live.state));
      for (const client of [...clients, late]) client.close();
    } finally {
      await second.close();
    }
  });

  it("a tab claiming events the log does not have (lost in a crash) is reset to the log as it is", async () => {
    fake.reset();
    const bridge = await startSyncBridge(fake.url);
    try {
      const sessionId = await bridge.createSession();
      const socket = (await import("socket.io-client")).io(bridge.url, {
        auth: { token: TEST_TOKEN },
        transports: ["websocket"],
        forceNew: true,
      });
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      const truth = await bridge.events(sessionId);
      const beyond = await emitCommand<{ events: { seq: number }[]; reset?: boolean }>(socket, "session.subscribe", {
        sessionId,
        afterSeq: truth.length + 5,
      });
      expect(beyond.reset).toBe(true);
      expect(beyond.events.map((e) => e.seq)).toEqual(truth.map((e) => e.seq));
      // Same seq, different event (the bridge reused the seq after losing the original).
      const reused = await emitCommand<{ reset?: boolean; events: unknown[] }>(socket, "session.subscribe", {
        sessionId,
        afterSeq: 1,
        afterCreatedAt: "2000-01-01T00:00:00.000Z",
      });
      expect(reused.reset).toBe(true);
      expect(reused.events).toHaveLength(truth.length);
      const fine = await emitCommand<{ reset?: boolean; events: unknown[] }>(socket, "session.subscribe", {
        sessionId,
        afterSeq: 1,
        afterCreatedAt: truth[0].created_at,
      });
      expect(fine.reset).toBeUndefined();
      expect(fine.events).toHaveLength(truth.length - 1);
      socket.disconnect();
    } finally {
      await bridge.close();
    }
  });

  it("a new tab on a long session gets a snapshot plus the tail, folding to the same state as the full log", async () => {
    fake.reset();
    const bridge = await startSyncBridge(fake.url);
    try {
      const sessionId = await bridge.createSession();
      for (let i = 0; i < 1_500; i++)
        bridge.services.log.append(sessionId, { type: "notice", payload: { level: "info", text: `note ${i}` } });
      await bridge.services.log.flush();
      const full = new SyncClient(bridge.url, sessionId, { token: TEST_TOKEN });
      await waitFor(() => full.lastSeq === 1_501, 10_000, "first tab loaded");
      // Appends after the snapshot was cached advance it incrementally.
      for (let i = 0; i < 10; i++)
        bridge.services.log.append(sessionId, { type: "notice", payload: { level: "info", text: `more ${i}` } });
      const late = new SyncClient(bridge.url, sessionId, { token: TEST_TOKEN });
      await waitFor(() => late.lastSeq === 1_511 && full.lastSeq === 1_511, 10_000, "late tab loaded");
      expect(late.applied.length).toBeLessThan(50);
      expect(full.applied.length).toBeLessThan(50);
      const { applyEvents, emptyTranscript } = await import("../../../server/protocol");
      const folded = applyEvents(
        emptyTranscript(),
        (await bridge.events(sessionId)).map((e) => ({ ...e, createdAt: e.created_at })) as never,
      );
      expect(late.live.state).toEqual(folded);
      full.close();
      late.close();
    } finally {
      await bridge.close();
    }
  });
});
