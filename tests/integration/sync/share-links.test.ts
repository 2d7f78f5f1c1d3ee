import http from "node:http";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { io, type Socket } from "socket.io-client";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import * as store from "../../../server/store";
import { hashToken } from "../../../server/sharing";
import { TEST_TOKEN, ackOf, connectedSocket, emitCommand, uniqueId, waitFor } from "../helpers";
import { startSyncBridge, type SyncBridge } from "./support";
import { testDatabaseUrl } from "../../db";

let fake: FakeLlm;
let bridge: SyncBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(async () => {
  fake.reset();
  bridge = await startSyncBridge(fake.url);
});
afterEach(async () => {
  await bridge.close();
});

async function createLink(sessionId: string, scope: "view" | "drive") {
  const response = await bridge.api(`/api/v1/sessions/${sessionId}/share-links`, { body: { scope, expires_in: 3600 } });
  expect(response.status).toBe(201);
  return (await response.json()) as { id: string; token: string; path: string; scope: string; lan_urls: string[] };
}

function shareSocket(token: string): Promise<Socket> {
  return connectedSocket(bridge.url, { share: token });
}

const ack = ackOf;

/** A session waiting on an approval for a shell command (yolo off). */
async function sessionWaitingForApproval(): Promise<{ sessionId: string; approvalId: string }> {
  const sessionId = await bridge.createSession({ yolo: false });
  fake.script({ toolCalls: [{ name: "shell", arguments: { command: "touch x.txt" } }] }, { text: "done" });
  const owner = io(bridge.url, { auth: { token: TEST_TOKEN }, transports: ["websocket"], forceNew: true });
  await emitCommand(owner, "turn.prompt", { commandId: uniqueId(), sessionId, text: "make x" });
  const approvalId = await waitFor(
    async () => {
      const pending = (await (await bridge.api("/api/v1/approvals?status=pending")).json()) as {
        approval_id: string;
        session_id: string;
      }[];
      return pending.find((p) => p.session_id === sessionId)?.approval_id;
    },
    10_000,
    "approval request",
  );
  owner.disconnect();
  return { sessionId, approvalId };
}

describe("share links", () => {
  it("stores only a hash of the token; /share/<token> sets its own HttpOnly cookie and lands on the session", async () => {
    const sessionId = await bridge.createSession();
    const link = await createLink(sessionId, "view");
    expect(link.token).toMatch(/^wls_/);
    expect(link.lan_urls).toEqual([]);
    const { db } = await store.openDb(bridge.home, testDatabaseUrl(bridge.home));
    const rows = await store.listShareLinks(db, sessionId);
    expect(rows).toHaveLength(1);
    expect(rows[0].tokenHash).toBe(hashToken(link.token));
    expect(JSON.stringify(rows)).not.toContain(link.token);
    await db.$disconnect();

    const landing = await fetch(`${bridge.url}${link.path}`, { redirect: "manual" });
    expect(landing.status).toBe(302);
    expect(landing.headers.get("location")).toBe(`/s/${sessionId}`);
    const cookie = landing.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^worldline_share_\d+=wls_/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).not.toContain(TEST_TOKEN);
    const pair = cookie.split(";")[0];
    const viaCookie = await fetch(`${bridge.url}/api/v1/sessions/${sessionId}/events`, { headers: { cookie: pair } });
    expect(viaCookie.status).toBe(200);
    const access = await fetch(`${bridge.url}/api/v1/access`, { headers: { cookie: pair } });
    expect(await access.json()).toEqual({ access: "view", session_id: sessionId });

    const wrong = await fetch(`${bridge.url}/share/wls_nottherighttoken`, { redirect: "manual" });
    expect(wrong.status).toBe(403);
  });

  it("a view link reads one session and subscribes live, but cannot prompt, cancel, approve or open terminals (socket and HTTP)", async () => {
    const { sessionId, approvalId } = await sessionWaitingForApproval();
    const other = await bridge.createSession();
    const link = await createLink(sessionId, "view");

    // HTTP: reads of its session only.
    expect((await bridge.api(`/api/v1/sessions/${sessionId}`, { token: link.token })).status).toBe(200);
    expect((await bridge.api(`/api/v1/sessions/${sessionId}/events`, { token: link.token })).status).toBe(200);
    expect((await bridge.api(`/api/v1/sessions/${other}`, { token: link.token })).status).toBe(403);
    expect((await bridge.api(`/api/v1/sessions`, { token: link.token })).status).toBe(403);
    expect((await bridge.api(`/api/v1/sessions/${sessionId}/cancel`, { token: link.token, body: {} })).status).toBe(
      403,
    );
    expect(
      (await bridge.api(`/api/v1/approvals/${approvalId}`, { token: link.token, body: { decision: "allow_once" } }))
        .status,
    ).toBe(403);
    expect(
      (await bridge.api(`/api/v1/sessions/${sessionId}`, { token: link.token, method: "PATCH", body: { yolo: true } }))
        .status,
    ).toBe(403);
    expect(
      (await bridge.api(`/api/v1/sessions/${sessionId}/share-links`, { token: link.token, body: { scope: "drive" } }))
        .status,
    ).toBe(403);
    expect(
      (await bridge.api(`/api/v1/chat/stream`, { token: link.token, body: { message: "hi", session_id: sessionId } }))
        .status,
    ).toBe(403);

    // Socket: subscribe yes, act no.
    const socket = await shareSocket(link.token);
    const subscribed = await emitCommand<{ events: { type: string }[] }>(socket, "session.subscribe", { sessionId });
    expect(subscribed.events.some((e) => e.type === "approval.requested")).toBe(true);
    for (const [name, payload] of [
      ["turn.prompt", { commandId: uniqueId(), sessionId, text: "hi" }],
      ["turn.steer", { commandId: uniqueId(), sessionId, text: "hi" }],
      ["turn.cancel", { commandId: uniqueId(), sessionId }],
      ["approval.decide", { commandId: uniqueId(), approvalId, decision: "allow_once" }],
      ["pty.create", { commandId: uniqueId(), sessionId }],
      ["approvals.subscribe", {}],
      ["session.subscribe", { sessionId: other }],
    ] as const) {
      const answer = await ack(socket, name, payload);
      expect(answer, name).toMatchObject({ ok: false, error: { code: "auth:forbidden" } });
    }
    const pending = (await (await bridge.api("/api/v1/approvals?status=pending")).json()) as unknown[];
    expect(pending).toHaveLength(1);
    socket.disconnect();
  });

  it("a drive link acts on its session only: it approves there and prompts there, nowhere else", async () => {
    const { sessionId, approvalId } = await sessionWaitingForApproval();
    const other = await bridge.createSession();
    const link = await createLink(sessionId, "drive");
    const socket = await shareSocket(link.token);
    await emitCommand(socket, "session.subscribe", { sessionId });
    await emitCommand(socket, "approval.decide", { commandId: uniqueId(), approvalId, decision: "allow_once" });
    await waitFor(
      async () => (await bridge.events(sessionId)).some((e) => e.type === "turn.completed"),
      10_000,
      "turn completed",
    );
    const started = await emitCommand<{ turnId: string }>(socket, "turn.prompt", {
      commandId: uniqueId(),
      sessionId,
      text: "again",
    });
    expect(started.turnId).toBeTruthy();
    expect(await ack(socket, "turn.prompt", { commandId: uniqueId(), sessionId: other, text: "hi" })).toMatchObject({
      ok: false,
      error: { code: "auth:forbidden" },
    });
    expect((await bridge.api(`/api/v1/sessions/${other}/cancel`, { token: link.token, body: {} })).status).toBe(403);
    expect((await bridge.api(`/api/v1/sessions/${sessionId}/cancel`, { token: link.token, body: {} })).status).toBe(
      200,
    );
    // Settings of the session (yolo) stay with the owner.
    expect(
      (await bridge.api(`/api/v1/sessions/${sessionId}`, { token: link.token, method: "PATCH", body: { yolo: true } }))
        .status,
    ).toBe(403);
    socket.disconnect();
  });

  it("a revoked link stops working at once: its open socket is closed, new ones and HTTP are refused", async () => {
    const sessionId = await bridge.createSession();
    const link = await createLink(sessionId, "view");
    const socket = await shareSocket(link.token);
    await emitCommand(socket, "session.subscribe", { sessionId });
    const closed = new Promise<string>((resolve) => socket.once("disconnect", resolve));
    const revoke = await bridge.api(`/api/v1/sessions/${sessionId}/share-links/${link.id}`, { method: "DELETE" });
    expect(revoke.status).toBe(200);
    expect(((await revoke.json()) as { active: boolean }).active).toBe(false);
    expect(await closed).toBe("io server disconnect");
    await expect(shareSocket(link.token)).rejects.toThrow(/unauthorized/);
    expect((await bridge.api(`/api/v1/sessions/${sessionId}`, { token: link.token })).status).toBe(401);
    expect((await fetch(`${bridge.url}${link.path}`, { redirect: "manual" })).status).toBe(403);
    const listed = (await (await bridge.api(`/api/v1/sessions/${sessionId}/share-links`)).json()) as {
      id: string;
      revoked_at: string | null;
    }[];
    expect(listed[0].revoked_at).not.toBeNull();
  });

  it("an expired link is refused (socket, HTTP and the /share landing)", async () => {
    const sessionId = await bridge.createSession();
    const token = "wls_expired-token-for-the-test-000000000000";
    const { db } = await store.openDb(bridge.home, testDatabaseUrl(bridge.home));
    await store.createShareLink(db, {
      sessionId,
      tokenHash: hashToken(token),
      scope: "drive",
      expiresAt: new Date(Date.now() - 1_000),
    });
    await db.$disconnect();
    await expect(shareSocket(token)).rejects.toThrow(/unauthorized/);
    expect((await bridge.api(`/api/v1/sessions/${sessionId}`, { token })).status).toBe(401);
    expect((await fetch(`${bridge.url}/share/${token}`, { redirect: "manual" })).status).toBe(403);
  });

  it("checks Host and Origin for share links too", async () => {
    const sessionId = await bridge.createSession();
    const link = await createLink(sessionId, "drive");
    const url = new URL(bridge.url);
    // fetch may not set Host; node:http can (a DNS-rebinding page would send its own name).
    const badHost = await new Promise<number>((resolve, reject) => {
      http
        .get(
          { host: url.hostname, port: url.port, path: link.path, headers: { host: `evil.example:${url.port}` } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        )
        .on("error", reject);
    });
    expect(badHost).toBe(403);
    const crossSite = await fetch(`${bridge.url}/api/v1/sessions/${sessionId}/cancel`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${link.token}`,
        origin: "http://evil.example",
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(crossSite.status).toBe(403);
  });

  it("presence: every tab sees the same viewer count, who is typing, and which tab runs the turn", async () => {
    const sessionId = await bridge.createSession();
    const link = await createLink(sessionId, "view");
    const owner = io(bridge.url, { auth: { token: TEST_TOKEN }, transports: ["websocket"], forceNew: true });
    const viewer = await shareSocket(link.token);
    type State = { viewers: { id: string; access: string; typing: boolean }[]; runningBy: string | null; you: string };
    const last: Record<string, State> = {};
    owner.on("presence.state", (s: State) => (last.owner = s));
    viewer.on("presence.state", (s: State) => (last.viewer = s));
    await emitCommand(owner, "session.subscribe", { sessionId });
    await emitCommand(viewer, "session.subscribe", { sessionId });
    await waitFor(() => last.owner?.viewers.length === 2 && last.viewer?.viewers.length === 2, 5_000, "two viewers");
    expect(last.viewer.viewers.map((v) => v.access).sort()).toEqual(["owner", "view"]);
    await emitCommand(owner, "presence.typing", { sessionId, typing: true });
    await waitFor(() => last.viewer.viewers.some((v) => v.id === last.owner.you && v.typing), 5_000, "typing seen");
    // A view link may not claim to type (it cannot prompt).
    expect(await ack(viewer, "presence.typing", { sessionId, typing: true })).toMatchObject({ ok: false });
    fake.script({ hang: true });
    await emitCommand(owner, "turn.prompt", { commandId: uniqueId(), sessionId, text: "go" });
    await waitFor(() => last.viewer.runningBy === last.owner.you, 5_000, "running tab seen");
    await emitCommand(owner, "turn.cancel", { commandId: uniqueId(), sessionId });
    await waitFor(() => last.viewer.runningBy === null, 5_000, "turn over");
    viewer.disconnect();
    await waitFor(() => last.owner.viewers.length === 1, 5_000, "viewer left");
    owner.disconnect();
  });
});
