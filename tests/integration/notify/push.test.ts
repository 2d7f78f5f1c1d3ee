import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Socket } from "socket.io-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../server/config";
import { startBridge, type Bridge } from "../../../server/main";
import { createShellTool } from "../../../server/tools";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { testDatabaseUrl } from "../../db";
import { connectedSocket, emitCommand, TEST_TOKEN, uniqueId, waitFor } from "../helpers";
import { PushService, startWebhook, type Device } from "./push-service";

/**
 * Web Push end to end on one bridge: a real bridge, the real shell tool and the
 * fake model; a push service on loopback that decrypts what it gets with the keys the test made.
 */
let fake: FakeLlm;
let pushService: PushService;
const bridges: Bridge[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  pushService = await new PushService().start();
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.disconnect();
  for (const bridge of bridges.splice(0)) await bridge.close();
  fake.reset();
});
afterAll(async () => {
  await pushService.close();
  await fake.close();
});

/** Waits are generous: this machine is often loaded, and a wait ends as soon as its condition holds. */
const WAIT_MS = 60_000;

const shell = (command: string) => ({ toolCalls: [{ name: "shell", arguments: { command } }] });

async function start(env: Record<string, string> = {}) {
  const home = await fsp.mkdtemp(path.join(os.tmpdir(), "wl-push-home-"));
  const workspace = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), "wl-push-ws-")));
  const config = loadConfig({
    PORT: "0",
    WORLDLINE_HOME: home,
    DATABASE_URL: testDatabaseUrl(home),
    WORLDLINE_TOKEN: TEST_TOKEN,
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: "x",
    WORLDLINE_MODEL: "fake-model",
    ...env,
  });
  const shellTool = createShellTool({ killGraceMs: 100 });
  const bridge = await startBridge({
    config,
    ui: false,
    retry: { maxRetries: 1, baseDelayMs: 10, maxDelayMs: 100 },
    tools: () => [shellTool],
    push: { timeoutMs: 400, retryDelaysMs: [300, 1_000, 3_000] },
  });
  bridges.push(bridge);
  const api = (pathname: string, init: { method?: string; body?: unknown; bearer?: string } = {}) =>
    fetch(`${bridge.url}${pathname}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        authorization: `Bearer ${init.bearer ?? bridge.token}`,
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const session = async () =>
    ((await (await api("/api/v1/sessions", { body: { workspace } })).json()) as { id: string }).id;
  const subscribe = async (device: Device, name = "Phone") => {
    const response = await api("/api/v1/push/subscriptions", {
      body: { endpoint: device.endpoint, expirationTime: null, keys: device.keys, device: name },
    });
    expect(response.status).toBe(201);
  };
  const socket = async () => {
    const connected = await connectedSocket(bridge.url, { token: bridge.token });
    sockets.push(connected);
    return connected;
  };
  const prompt = async (sessionId: string, text: string) =>
    emitCommand<{ turnId: string }>(await socket(), "turn.prompt", { commandId: uniqueId(), sessionId, text });
  return { bridge, home, workspace, api, session, subscribe, socket, prompt, idle: () => bridge.services.push!.idle() };
}

// Several turns per test on a machine that is often loaded: the minute the suite gives is too tight.
describe("Web Push", { timeout: 180_000 }, () => {
  it("keeps its VAPID key pair in WORLDLINE_HOME (0600) and hands out the public key", async () => {
    const { api, home } = await start();
    const { public_key } = (await (await api("/api/v1/push/key")).json()) as { public_key: string };
    expect(Buffer.from(public_key, "base64url")).toHaveLength(65);
    const file = path.join(home, "push", "vapid.json");
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, "utf8")).publicKey).toBe(public_key);
  });

  it("refuses bad subscriptions with 400 and stores none of them", async () => {
    const { api, subscribe } = await start();
    const good = pushService.device("good-shape");
    const bad: unknown[] = [
      { endpoint: "http://push.example.com/x", keys: good.keys },
      { endpoint: "ftp://127.0.0.1/x", keys: good.keys },
      { endpoint: "https://push.example.com/x" },
      { endpoint: "https://push.example.com/x", keys: { p256dh: good.keys.p256dh } },
      { endpoint: "https://push.example.com/x", keys: { p256dh: "short", auth: good.keys.auth } },
      { endpoint: `https://push.example.com/${"x".repeat(2_000)}`, keys: good.keys },
      { endpoint: "https://user:pw@push.example.com/x", keys: good.keys },
      "not an object",
    ];
    for (const body of bad) {
      const response = await api("/api/v1/push/subscriptions", { body });
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toMatch(/:invalid$|:bad_request$/);
    }
    expect(await (await api("/api/v1/push/subscriptions")).json()).toEqual([]);
    // An https endpoint anywhere, an http one on loopback: stored once, however often a tab subscribes again.
    await subscribe(good);
    await subscribe(good, "Phone again");
    await subscribe({ ...good, endpoint: "https://push.example.com/abc" }, "Laptop");
    const devices = (await (await api("/api/v1/push/subscriptions")).json()) as { device: string; endpoint: string }[];
    expect(devices.map((device) => device.device).sort()).toEqual(["Laptop", "Phone again"]);
    expect(JSON.stringify(devices)).not.toContain(good.keys.auth);
    const removed = await api("/api/v1/push/subscriptions", { method: "DELETE", body: { endpoint: good.endpoint } });
    expect(removed.status).toBe(200);
    const again = await api("/api/v1/push/subscriptions", { method: "DELETE", body: { endpoint: good.endpoint } });
    expect(again.status).toBe(404);
    expect(((await (await api("/api/v1/push/subscriptions")).json()) as unknown[]).length).toBe(1);
  });

  it("pushes a waiting approval with an action token; Allow from the notification decides without a cookie and the turn continues; used or foreign tokens get 401", async () => {
    const { api, session, subscribe, prompt, workspace } = await start();
    const phone = pushService.device("phone-approvals");
    await subscribe(phone);
    const sessionId = await session();
    fake.script(shell("touch one.txt"), shell("touch two.txt"), { text: "Made both." });
    await prompt(sessionId, "make two files");

    const first = await waitFor(() => pushService.of("phone-approvals")[0], WAIT_MS, "the first push");
    expect(first).toMatchObject({
      type: "approval.requested",
      session_id: sessionId,
      tool: "shell",
      title: expect.any(String),
    });
    expect(first.summary).toContain("touch one.txt");
    expect(first.action_token).toMatch(/^wla_/);
    const header = pushService.received.find((entry) => entry.device === "phone-approvals")!.headers;
    const { public_key } = (await (await api("/api/v1/push/key")).json()) as { public_key: string };
    expect(header.authorization).toContain(`k=${public_key}`);
    expect(header["content-encoding"]).toBe("aes128gcm");

    // The token opens nothing else.
    expect((await api("/api/v1/sessions", { bearer: first.action_token as string })).status).toBe(401);
    const allow = await api(`/api/v1/approvals/${first.approval_id as string}`, {
      bearer: first.action_token as string,
      body: { decision: "allow_once" },
    });
    expect(allow.status).toBe(200);
    expect(await allow.json()).toMatchObject({ status: "approved", decided_by: "push" });

    const second = await waitFor(() => pushService.of("phone-approvals")[1], WAIT_MS, "the second push");
    expect(second).toMatchObject({ type: "approval.requested", tool: "shell" });
    expect(second.approval_id).not.toBe(first.approval_id);
    const decide = (approvalId: unknown, token: unknown, decision = "allow_once") =>
      api(`/api/v1/approvals/${approvalId as string}`, { bearer: token as string, body: { decision } });
    // Replayed, and foreign (the second approval's token on the first, the first's on the second).
    expect((await decide(first.approval_id, first.action_token)).status).toBe(401);
    expect((await decide(second.approval_id, first.action_token)).status).toBe(401);
    expect((await decide(first.approval_id, second.action_token)).status).toBe(401);
    const pending = (await (await api("/api/v1/approvals?status=pending")).json()) as { approval_id: string }[];
    expect(pending.map((approval) => approval.approval_id)).toEqual([second.approval_id]);
    // The foreign try did not use the token up.
    expect((await decide(second.approval_id, second.action_token)).status).toBe(200);
    expect((await decide(second.approval_id, second.action_token)).status).toBe(401);

    const ended = await waitFor(() => pushService.of("phone-approvals")[2], WAIT_MS, "the turn's end");
    expect(ended).toMatchObject({ type: "turn.completed", session_id: sessionId, summary: "Finished." });
    expect(ended.action_token).toBeUndefined();
    expect(fs.existsSync(path.join(workspace, "one.txt")) && fs.existsSync(path.join(workspace, "two.txt"))).toBe(true);
  });

  it("pushes a password request without actions, and a failed turn as turn.failed", async () => {
    const { api, session, subscribe, prompt } = await start();
    const phone = pushService.device("phone-password");
    await subscribe(phone);
    const sessionId = await session();
    fake.script(shell("sudo true"), { text: "done" });
    await prompt(sessionId, "sudo it");
    // sudo waits on an approval first, then on the password.
    const approval = await waitFor(() => pushService.of("phone-password")[0], WAIT_MS, "the approval push");
    const allow = await api(`/api/v1/approvals/${approval.approval_id as string}`, {
      bearer: approval.action_token as string,
      body: { decision: "allow_once" },
    });
    expect(allow.status).toBe(200);
    const asked = await waitFor(() => pushService.of("phone-password")[1], WAIT_MS, "the password push");
    expect(asked).toMatchObject({ type: "password.requested", session_id: sessionId });
    expect(asked.action_token).toBeUndefined();

    const other = await session();
    // The sudo turn still waits on its password: its scripted answer is dropped.
    fake.reset();
    fake.script({ status: 400, body: { error: { message: "model exploded" } } });
    await prompt(other, "fail");
    const failed = await waitFor(
      () => pushService.of("phone-password").find((notice) => notice.session_id === other),
      WAIT_MS,
      "the failure push",
    );
    expect(failed).toMatchObject({ type: "turn.failed" });
    expect(failed.summary).toMatch(/^Failed/);
  });

  it("pushes nothing while the session is visible in a focused tab, and again once it is not", async () => {
    const { session, subscribe, prompt, socket, idle } = await start();
    const phone = pushService.device("phone-focus");
    await subscribe(phone);
    const sessionId = await session();
    const tab = await socket();
    await emitCommand(tab, "session.subscribe", { sessionId });
    await emitCommand(tab, "presence.focus", { commandId: uniqueId(), sessionId, focused: true });

    fake.script({ text: "seen live" });
    await prompt(sessionId, "watched");
    await waitFor(() => fake.requests.length >= 1, WAIT_MS, "the model call");
    await idleAfterTurn(idle, tab, sessionId, 1);
    expect(pushService.of("phone-focus")).toEqual([]);

    await emitCommand(tab, "presence.focus", { commandId: uniqueId(), sessionId, focused: false });
    fake.script({ text: "unseen" });
    await prompt(sessionId, "away");
    const notice = await waitFor(() => pushService.of("phone-focus")[0], WAIT_MS, "the push once the tab is blurred");
    expect(notice).toMatchObject({ type: "turn.completed", session_id: sessionId });
  });

  it("a 410 removes the subscription; a hanging push service is timed out and tried again", async () => {
    const { api, session, subscribe, prompt } = await start();
    const gone = pushService.device("gone-device", 410);
    const slow = pushService.device("slow-device", "hang");
    await subscribe(gone, "Old phone");
    await subscribe(slow, "Slow laptop");
    const sessionId = await session();
    fake.script({ text: "quick" });
    await prompt(sessionId, "go");
    await waitFor(
      async () => {
        const events = (await (await api(`/api/v1/sessions/${sessionId}/events`)).json()) as { type: string }[];
        return events.some((event) => event.type === "turn.completed");
      },
      WAIT_MS,
      "the turn's end",
    );
    await waitFor(() => (pushService.attempts.get("gone-device") ?? 0) >= 1, WAIT_MS, "the 410");
    await waitFor(
      async () => ((await (await api("/api/v1/push/subscriptions")).json()) as unknown[]).length === 1,
      WAIT_MS,
      "the gone device removed",
    );
    // The slow device: first try times out (400 ms), then it answers.
    await waitFor(() => (pushService.attempts.get("slow-device") ?? 0) >= 1, WAIT_MS, "the first try");
    slow.answer = 201;
    const late = await waitFor(() => pushService.of("slow-device")[0], WAIT_MS, "the retried push");
    expect(late).toMatchObject({ type: "turn.completed", session_id: sessionId });
    expect(pushService.attempts.get("slow-device")).toBeGreaterThanOrEqual(2);
  });

  it("POSTs the same notices to WORLDLINE_NOTIFY_WEBHOOK (retried), without action tokens unless WORLDLINE_NOTIFY_ACTIONS=1", async () => {
    const hook = await startWebhook(1);
    try {
      const { session, subscribe, prompt, api } = await start({ WORLDLINE_NOTIFY_WEBHOOK: hook.url });
      const phone = pushService.device("phone-webhook");
      await subscribe(phone);
      const sessionId = await session();
      fake.script(shell("touch hooked.txt"), { text: "ok" });
      await prompt(sessionId, "hook it");
      const pushed = await waitFor(() => pushService.of("phone-webhook")[0], WAIT_MS, "the push");
      const hooked = await waitFor(() => hook.bodies[0] as Record<string, unknown>, WAIT_MS, "the webhook");
      const { action_token: _token, ...withoutToken } = pushed;
      expect(hooked).toEqual(withoutToken);
      const allow = await api(`/api/v1/approvals/${pushed.approval_id as string}`, {
        bearer: pushed.action_token as string,
        body: { decision: "allow_once" },
      });
      expect(allow.status).toBe(200);
      await waitFor(() => hook.bodies.length >= 2, WAIT_MS, "the turn's end on the webhook");
      expect(hook.bodies[1]).toEqual(pushService.of("phone-webhook")[1]);
      expect(hook.bodies).toHaveLength(2);

      const withActions = await start({ WORLDLINE_NOTIFY_WEBHOOK: hook.url, WORLDLINE_NOTIFY_ACTIONS: "1" });
      const other = await withActions.session();
      fake.script(shell("touch acted.txt"), { text: "ok" });
      await withActions.prompt(other, "hook it with actions");
      const acted = await waitFor(
        () =>
          hook.bodies.find((body) => (body as { session_id: string }).session_id === other) as Record<string, string>,
        WAIT_MS,
        "the webhook with an action token",
      );
      expect(acted.action_token).toMatch(/^wla_/);
      const decided = await withActions.api(`/api/v1/approvals/${acted.approval_id}`, {
        bearer: acted.action_token,
        body: { decision: "reject" },
      });
      expect(decided.status).toBe(200);
    } finally {
      await hook.close();
    }
  });
});

/** Waits for the n-th turn.completed the tab saw, then for the notifier to settle. */
async function idleAfterTurn(idle: () => Promise<void>, tab: Socket, sessionId: string, n: number): Promise<void> {
  let completed = 0;
  tab.on("session.events", (batch: { sessionId: string; events: { type: string }[] }) => {
    if (batch.sessionId === sessionId)
      completed += batch.events.filter((event) => event.type === "turn.completed").length;
  });
  await waitFor(() => completed >= n, WAIT_MS, "the turn's end in the tab");
  await idle();
}
