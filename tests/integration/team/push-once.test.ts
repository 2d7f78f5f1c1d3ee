import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ack } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { TEST_POSTGRES } from "../../db";
import { uniqueId } from "../helpers";
import { waitFor } from "../../support/wait";
import { startChildBridge, type ChildBridge } from "../reliability/child-bridge";
import { SyncClient } from "../sync/support";
import { PushService } from "../notify/push-service";

/**
 * Team mode (PostgreSQL + Redis, two `worldline serve` processes with their own homes): both bridges
 * hear the session's events, and each (event, device) pair is claimed in the store, so a device gets
 * each notice once. The deployment shares one VAPID key pair; Allow through the other bridge decides.
 */
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const SERVER = TEST_POSTGRES || "postgresql://postgres@127.0.0.1:5432";
const TOKEN = "push-team-token-0123456789abcdef";

let fake: FakeLlm;
let pushService: PushService;
let database: string;
let workspace: string;
const bridges: ChildBridge[] = [];
const sockets: Socket[] = [];
const tabs: SyncClient[] = [];

function serverUrl(name: string): string {
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  return url.toString();
}

async function api<T>(bridge: ChildBridge, pathname: string, body?: unknown, bearer = TOKEN): Promise<T> {
  const response = await fetch(`${bridge.url}${pathname}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

beforeAll(async () => {
  fake = await startFakeLlm();
  pushService = await new PushService().start();
  database = `wlt_push_${randomUUID().replaceAll("-", "")}`;
  workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-push-team-ws-")));
  const env = {
    DATABASE_URL: serverUrl(database),
    REDIS_URL,
    WORLDLINE_REDIS_PREFIX: `wlt-${randomUUID()}`,
    WORLDLINE_TOKEN: TOKEN,
  };
  // One at a time: the first creates and migrates the database.
  for (const name of ["A", "B"]) {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), `wl-push-team-${name}-`));
    bridges.push(await startChildBridge({ home, llmUrl: fake.url, env: { ...env, HOME: home } }));
  }
  // Two bridges start one after the other, each bundling and migrating: generous on a loaded machine.
}, 180_000);

afterAll(async () => {
  for (const tab of tabs) tab.close();
  for (const socket of sockets) socket.disconnect();
  for (const bridge of bridges) {
    if (bridge.child.exitCode === null && bridge.child.signalCode === null) {
      bridge.child.kill("SIGTERM");
      await bridge.exited;
    }
  }
  await pushService?.close();
  await fake?.close();
  const client = new pg.Client({ connectionString: serverUrl("postgres") });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
  await client.end();
});

describe("push with two bridges (PostgreSQL + Redis)", { timeout: 180_000 }, () => {
  it("sends each notice once per device, with one key pair; Allow through the other bridge decides", async () => {
    const [a, b] = bridges;
    const keys = await Promise.all(bridges.map((bridge) => api<{ public_key: string }>(bridge, "/api/v1/push/key")));
    expect(keys[0].public_key).toBe(keys[1].public_key);

    const phone = pushService.device("team-phone");
    const laptop = pushService.device("team-laptop");
    for (const [bridge, device, name] of [
      [a, phone, "Phone"],
      [b, laptop, "Laptop"],
    ] as const)
      await api(bridge, "/api/v1/push/subscriptions", { endpoint: device.endpoint, keys: device.keys, device: name });

    const sessionId = (await api<{ id: string }>(a, "/api/v1/sessions", { workspace })).id;
    // Tabs on both bridges (neither focused): both bridges' logs deliver the session's events.
    for (const bridge of bridges) {
      const tab = new SyncClient(bridge.url, sessionId, { token: TOKEN });
      tabs.push(tab);
      await waitFor(() => tab.subscribes > 0, 10_000, "a tab's subscribe");
    }
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "touch team.txt" } }] },
      { text: "Done in team." },
    );
    const socket = io(a.url, { auth: { token: TOKEN }, transports: ["websocket"], forceNew: true });
    sockets.push(socket);
    const ack = (await socket
      .timeout(15_000)
      .emitWithAck("turn.prompt", { commandId: uniqueId(), sessionId, text: "make it" })) as Ack<unknown>;
    expect(ack.ok).toBe(true);

    const asked = await waitFor(() => pushService.of("team-phone")[0], 20_000, "the approval push");
    expect(asked).toMatchObject({ type: "approval.requested", session_id: sessionId });
    await api(
      b,
      `/api/v1/approvals/${asked.approval_id as string}`,
      { decision: "allow_once" },
      asked.action_token as string,
    );

    await waitFor(
      () => pushService.of("team-laptop").length >= 2 && pushService.of("team-phone").length >= 2,
      20_000,
      "the end",
    );
    // Both bridges had the events; give a duplicate time to show up.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    for (const device of ["team-phone", "team-laptop"]) {
      expect(pushService.of(device).map((notice) => notice.type)).toEqual(["approval.requested", "turn.completed"]);
    }
    expect(await fs.stat(path.join(workspace, "team.txt"))).toBeTruthy();
  });
});
