import { randomUUID } from "node:crypto";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseUrl, onAdmin } from "./team-db";
import { ackOf, startTestBridge, type TestBridge } from "../helpers";

/**
 * A credential ended on one bridge of a team ends on all of them (SECURITY.md, "Sockets follow
 * their credential"): two bridges on one PostgreSQL database and one Redis; the revocation is made
 * through A, the socket is on B, and B closes it within 2 s.
 */
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const WITHIN_MS = 2_000;

let database: string;
let a: TestBridge;
let b: TestBridge;
const sockets: Socket[] = [];

beforeAll(async () => {
  database = `wlt_revoke_team_${randomUUID().slice(0, 8)}`;
  await onAdmin(`CREATE DATABASE ${database}`);
  const env = {
    DATABASE_URL: databaseUrl(database),
    REDIS_URL,
    WORLDLINE_REDIS_PREFIX: `wlt-revoke-${randomUUID().slice(0, 8)}`,
  };
  a = await startTestBridge({ env });
  b = await startTestBridge({ env });
});
afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  await b?.stop();
  await a?.stop();
  if (database) await onAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

async function tokenOf(name: string): Promise<{ id: string; token: string }> {
  await a.services.people.addUser({ name, role: "member", password: `${name}-password-1` });
  const user = (await a.services.people.listUsers()).find((candidate) => candidate.name === name)!;
  return a.services.people.createApiToken(user.id, { name: "t" });
}

async function on(bridge: TestBridge, auth: Record<string, string>): Promise<Socket> {
  const socket = io(bridge.url, { auth, transports: ["websocket"], forceNew: true, reconnection: false });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return socket;
}

async function call(bridge: TestBridge, token: string, pathname: string, method: string, body?: unknown) {
  const response = await fetch(`${bridge.url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<any>;
}

/** Runs `end` on one bridge and checks the socket (on the other) was closed by its bridge within WITHIN_MS. */
async function expectClosed(socket: Socket, end: () => Promise<unknown>): Promise<void> {
  const closed = new Promise<string>((resolve) => socket.once("disconnect", resolve));
  const started = Date.now();
  await end();
  const reason = await Promise.race([
    closed,
    new Promise<string>((resolve) => setTimeout(() => resolve("still open"), 3 * WITHIN_MS)),
  ]);
  expect(reason).toBe("io server disconnect");
  expect(Date.now() - started).toBeLessThan(WITHIN_MS);
}

describe("revocation across the bridges of a team", () => {
  it("a personal token revoked through A closes its socket on B", async () => {
    const tina = await tokenOf("tina");
    const socket = await on(b, { token: tina.token });
    await expectClosed(socket, () => call(a, tina.token, `/api/v1/me/tokens/${tina.id}`, "DELETE"));
  });

  it("a drive link revoked through A closes the socket driving through B", async () => {
    const sessionId = (await call(a, a.token, "/api/v1/sessions", "POST", { workspace: a.workspace })).id as string;
    const link = await call(a, a.token, `/api/v1/sessions/${sessionId}/share-links`, "POST", { scope: "drive" });
    const socket = await on(b, { share: link.token });
    expect((await ackOf(socket, "session.subscribe", { sessionId })).ok).toBe(true);
    await expectClosed(socket, () =>
      call(a, a.token, `/api/v1/sessions/${sessionId}/share-links/${link.id}`, "DELETE"),
    );
  });

  it("unsharing through A closes the watching socket on B; disabling through A closes the person's sockets on B", async () => {
    const uma = await tokenOf("uma");
    const vic = await tokenOf("vic");
    const sessionId = (await call(a, uma.token, "/api/v1/sessions", "POST", { workspace: a.workspace })).id as string;
    await call(a, uma.token, `/api/v1/sessions/${sessionId}/access`, "PUT", { subject: "vic", access: "drive" });
    const watching = await on(b, { token: vic.token });
    expect((await ackOf(watching, "session.subscribe", { sessionId })).ok).toBe(true);
    await expectClosed(watching, () =>
      call(a, uma.token, `/api/v1/sessions/${sessionId}/access?subject=vic`, "DELETE"),
    );
    const other = await on(b, { token: uma.token });
    await expectClosed(other, () => call(a, a.token, "/api/v1/users/uma", "PATCH", { disabled: true }));
  });
});
