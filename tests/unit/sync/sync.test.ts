import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "socket.io";
import { io } from "socket.io-client";
import { describe, expect, it } from "vitest";
import { emitFresh, StaleCommandError } from "../../../components/transport/fresh-emit";
import {
  LiveTranscript,
  applyEvents,
  decodeSnapshot,
  emptyTranscript,
  encodeSnapshot,
  type EventEnvelope,
} from "../../../server/protocol";
import { httpVerdict, pageAllowed, socketVerdict, type ShareCapability } from "../../../server/sharing";

const view: ShareCapability = { linkId: "l1", sessionId: "s1", scope: "view", expiresAt: null };
const drive: ShareCapability = { ...view, scope: "drive" };

let seq = 0;
const at = (n: number) => new Date(1_700_000_000_000 + n).toISOString();
function event(type: string, payload: unknown): EventEnvelope {
  seq++;
  return { seq, createdAt: at(seq), type, payload } as EventEnvelope;
}

describe("share policy", () => {
  it("lets a view link read only its session", () => {
    expect(httpVerdict(view, "GET", "/api/v1/sessions/s1")).toBe("allow");
    expect(httpVerdict(view, "GET", "/api/v1/sessions/s1/events")).toBe("allow");
    expect(httpVerdict(view, "GET", "/api/v1/sessions/s2/events")).toBe("deny");
    expect(httpVerdict(view, "GET", "/api/v1/sessions")).toBe("deny");
    expect(httpVerdict(view, "POST", "/api/v1/sessions/s1/cancel")).toBe("deny");
    expect(httpVerdict(view, "POST", "/api/v1/approvals/a1")).toBe("deny");
    expect(httpVerdict(view, "GET", "/api/v1/sessions/s1/share-links")).toBe("deny");
    expect(httpVerdict(view, "GET", "/api/v1/settings")).toBe("deny");
  });

  it("lets a drive link act on its session but never change its settings, delete it or manage links", () => {
    expect(httpVerdict(drive, "POST", "/api/v1/sessions/s1/cancel")).toBe("allow");
    expect(httpVerdict(drive, "POST", "/api/v1/sessions/s2/cancel")).toBe("deny");
    expect(httpVerdict(drive, "PATCH", "/api/v1/sessions/s1")).toBe("deny");
    expect(httpVerdict(drive, "DELETE", "/api/v1/sessions/s1")).toBe("deny");
    expect(httpVerdict(drive, "POST", "/api/v1/sessions/s1/share-links")).toBe("deny");
    expect(httpVerdict(drive, "POST", "/api/v1/sessions/s1/fork")).toBe("deny");
    expect(httpVerdict(drive, "POST", "/api/v1/approvals/a1")).toBe("approval");
    expect(httpVerdict(drive, "POST", "/api/v1/chat/stream")).toBe("deny");
  });

  it("sorts socket commands into reads, drives and approvals, always on the link's session", () => {
    expect(socketVerdict(view, "session.subscribe", { sessionId: "s1" })).toBe("allow");
    expect(socketVerdict(view, "session.subscribe", { sessionId: "s2" })).toBe("deny");
    expect(socketVerdict(view, "turn.prompt", { sessionId: "s1" })).toBe("deny");
    expect(socketVerdict(drive, "turn.prompt", { sessionId: "s1" })).toBe("allow");
    expect(socketVerdict(drive, "turn.prompt", { sessionId: "s2" })).toBe("deny");
    expect(socketVerdict(view, "approval.decide", { approvalId: "a" })).toBe("deny");
    expect(socketVerdict(drive, "approval.decide", { approvalId: "a" })).toBe("approval");
    expect(socketVerdict(drive, "approvals.subscribe", {})).toBe("deny");
    expect(socketVerdict(drive, "settings.anything", { sessionId: "s1" })).toBe("deny");
    expect(socketVerdict(view, "pty.ack", { terminalId: "t", bytes: 1 })).toBe("allow");
    expect(socketVerdict(view, "pty.input", { sessionId: "s1", terminalId: "t", data: "x" })).toBe("deny");
  });

  it("serves a link only its session page and the app's assets", () => {
    expect(pageAllowed(view, "/s/s1")).toBe(true);
    expect(pageAllowed(view, "/_next/static/chunk.js")).toBe(true);
    expect(pageAllowed(view, "/s/s2")).toBe(false);
    expect(pageAllowed(view, "/settings")).toBe(false);
  });
});

describe("snapshots", () => {
  it("encode checkpoint views that are prefixes as lengths and decode to the same state", () => {
    seq = 0;
    const events = [
      event("message.user", { turnId: "t", messageId: "u1", text: "hi" }),
      event("checkpoint.created", { checkpointId: "c1", number: 1, turn: 1, step: 0, reason: "turn" }),
      event("message.part.delta", { turnId: "t", messageId: "m1", part: "text", delta: "hello" }),
      event("message.completed", { turnId: "t", messageId: "m1" }),
      event("checkpoint.created", { checkpointId: "c2", number: 2, turn: 1, step: 1, reason: "step" }),
      event("message.user", { turnId: "t2", messageId: "u2", text: "more" }),
    ];
    const state = applyEvents(emptyTranscript(), events);
    const snapshot = encodeSnapshot(state);
    expect(snapshot.checkpointPrefixes).toEqual({ c1: 1, c2: 2 });
    expect(snapshot.checkpointViews).toEqual({});
    const decoded = decodeSnapshot(JSON.parse(JSON.stringify(snapshot)));
    expect(decoded).toEqual(JSON.parse(JSON.stringify(state)));
    // A rewind after decoding shows the same items as one after folding.
    const rewind = {
      seq: 7,
      createdAt: at(7),
      type: "checkpoint.rewound",
      payload: {
        checkpointId: "c1",
        number: 1,
        undoCheckpointId: "c3",
        undoNumber: 3,
        conversation: true,
        files: false,
        written: 0,
        deleted: 0,
      },
    } as EventEnvelope;
    expect(applyEvents(decoded, [rewind]).items).toEqual(
      JSON.parse(JSON.stringify(applyEvents(state, [rewind]).items)),
    );
  });
});

describe("LiveTranscript", () => {
  it("holds a live event that overtakes the subscribe answer and applies it after, in order", () => {
    seq = 0;
    const [a, b, c] = [
      event("notice", { level: "info", text: "a" }),
      event("notice", { level: "info", text: "b" }),
      event("notice", { level: "info", text: "c" }),
    ];
    const applied: number[] = [];
    const live = new LiveTranscript((events) => applied.push(...events.map((e) => e.seq)));
    live.live([c]);
    expect(live.state.lastSeq).toBe(0);
    expect(live.gap()).toBe(true);
    live.subscribed({ events: [a, b], lastSeq: 2 });
    expect(applied).toEqual([1, 2, 3]);
    expect(live.gap()).toBe(false);
    live.live([b, c]);
    expect(applied).toEqual([1, 2, 3]);
    expect(live.resumeFrom()).toEqual({ afterSeq: 3, afterCreatedAt: c.createdAt });
  });

  it("drops everything it had on a reset", () => {
    seq = 0;
    const live = new LiveTranscript();
    live.live([event("notice", { level: "info", text: "lost" })]);
    seq = 0;
    const fresh = event("notice", { level: "info", text: "kept" });
    live.subscribed({ events: [fresh], lastSeq: 1, reset: true });
    expect(live.state.items.map((i) => (i as { text: string }).text)).toEqual(["kept"]);
  });
});

describe("commands while offline", () => {
  it("are dropped, never sent, after the stale limit; sent once when the connection is back in time", async () => {
    const server = createServer();
    const ioServer = new Server(server);
    const received: string[] = [];
    ioServer.on("connection", (socket) =>
      socket.on("turn.prompt", (body: { text: string }, ack: (r: unknown) => void) => {
        received.push(body.text);
        ack({ ok: true });
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const socket = io(url, { transports: ["websocket"], forceNew: true, autoConnect: false });
    try {
      // Offline beyond the limit: refused locally, and the reconnect flushes nothing.
      await expect(
        emitFresh(socket, "turn.prompt", { text: "stale" }, { timeoutMs: 1_000, maxQueueMs: 100 }),
      ).rejects.toBeInstanceOf(StaleCommandError);
      socket.connect();
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
      // A packet flushed on reconnect would reach the server before this one, sent after it.
      expect(await socket.timeout(1_000).emitWithAck("turn.prompt", { text: "probe" })).toEqual({ ok: true });
      expect(received).toEqual(["probe"]);
      // Offline briefly: waits for the connection, then sends once.
      socket.disconnect();
      const pending = emitFresh(socket, "turn.prompt", { text: "fresh" }, { timeoutMs: 1_000, maxQueueMs: 2_000 });
      setTimeout(() => socket.connect(), 50);
      expect(await pending).toEqual({ ok: true });
      expect(received).toEqual(["probe", "fresh"]);
    } finally {
      socket.disconnect();
      await new Promise<void>((resolve) => ioServer.close(() => resolve()));
    }
  });
});
