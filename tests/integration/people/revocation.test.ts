import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { ackOf, startTestBridge, uniqueId, waitFor, type TestBridge } from "../helpers";

/**
 * A socket's access follows the credential it came with (SECURITY.md, "Sockets follow their
 * credential"): each way a credential ends closes the sockets that came with it within 2 s,
 * and only those.
 */
const WITHIN_MS = 2_000;

let fake: FakeLlm;
let hub: TestBridge;
const sockets: Socket[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  hub = await startTestBridge({ llmUrl: fake.url });
});
afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  await hub?.stop();
  await fake?.close();
});

async function person(name: string, role: "admin" | "member" | "viewer" = "member"): Promise<string> {
  await hub.services.people.addUser({ name, role, password: `${name}-password-1` });
  return signIn(name);
}

/** A sign-in cookie header for a person. */
async function signIn(name: string, password = `${name}-password-1`): Promise<string> {
  const response = await fetch(`${hub.url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, password }),
  });
  expect(response.status).toBe(200);
  return response.headers
    .getSetCookie()
    .find((line) => line.startsWith(hub.services.auth.personCookieName))!
    .split(";")[0];
}

async function call(pathname: string, as: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  const headers: Record<string, string> = as.startsWith("worldline_person_")
    ? { cookie: as, "x-worldline-csrf": hub.services.auth.csrfToken }
    : { authorization: `Bearer ${as}` };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${hub.url}${pathname}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function api<T>(pathname: string, as: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await call(pathname, as, init);
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function apiToken(cookie: string): Promise<{ id: string; token: string }> {
  return api("/api/v1/me/tokens", cookie, { body: { name: `t-${uniqueId()}` } });
}

/** A connected socket with a token (`auth.token`) or a sign-in cookie; never reconnects by itself. */
async function socketWith(credential: string): Promise<Socket> {
  const socket = credential.startsWith("worldline_person_")
    ? io(hub.url, {
        transports: ["websocket"],
        forceNew: true,
        reconnection: false,
        extraHeaders: { cookie: credential },
      })
    : io(hub.url, { auth: { token: credential }, transports: ["websocket"], forceNew: true, reconnection: false });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return socket;
}

/** Resolves with how long after `since` the bridge closed the socket. */
function closedBy(socket: Socket): () => Promise<number> {
  const closed = new Promise<{ reason: string; at: number }>((resolve) =>
    socket.once("disconnect", (reason) => resolve({ reason, at: Date.now() })),
  );
  return async () => {
    const since = Date.now();
    const { reason, at } = await Promise.race([
      closed,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the socket stayed open")), 3 * WITHIN_MS)),
    ]);
    expect(reason).toBe("io server disconnect");
    return at - since;
  };
}

/** Runs `end` and checks the socket was closed by the bridge within WITHIN_MS of it. */
async function expectClosed(socket: Socket, end: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  const closed = closedBy(socket);
  await end();
  await closed();
  expect(Date.now() - started).toBeLessThan(WITHIN_MS);
}

async function sessionOf(as: string): Promise<string> {
  return (await api<{ id: string }>("/api/v1/sessions", as, { body: { workspace: hub.workspace } })).id;
}

describe("an open socket's access ends with its credential", () => {
  it("a revoked personal API token closes the sockets that came with it, and no other", async () => {
    const cookie = await person("rita");
    const revoked = await apiToken(cookie);
    const kept = await apiToken(cookie);
    const doomed = await socketWith(revoked.token);
    const other = await socketWith(kept.token);
    expect((await ackOf(doomed, "session.subscribe", { sessionId: await sessionOf(cookie) })).ok).toBe(true);
    await expectClosed(doomed, () => api(`/api/v1/me/tokens/${revoked.id}`, cookie, { method: "DELETE" }));
    expect(other.connected).toBe(true);
  });

  it("an API token that expires closes its socket when it expires", async () => {
    await person("ezra");
    const ezra = (await hub.services.people.listUsers()).find((user) => user.name === "ezra")!;
    // Below the API's one-minute floor, made directly: the expiry itself is what is tested.
    const { token } = await hub.services.people.createApiToken(ezra.id, { name: "short", expiresInSeconds: 1 });
    const socket = await socketWith(token);
    const closed = closedBy(socket);
    expect(await closed()).toBeLessThan(1_000 + WITHIN_MS);
  });

  it("signing out closes the sockets of that browser, not the person's other browsers", async () => {
    await person("sam");
    const laptop = await signIn("sam");
    const phone = await signIn("sam");
    const laptopSocket = await socketWith(laptop);
    const phoneSocket = await socketWith(phone);
    await expectClosed(laptopSocket, () => call("/auth/logout", laptop, { body: {} }));
    expect(phoneSocket.connected).toBe(true);
  });

  it("a new password, a new role and a disable each close every socket of the person", async () => {
    const first = await person("pia");
    let password = "pia-password-1";
    for (const change of [{ password: "pia-password-2" }, { role: "viewer" }, { disabled: true }]) {
      const cookie = await signIn("pia", password);
      const byToken = await socketWith((await apiToken(cookie)).token);
      const byCookie = await socketWith(cookie);
      const tokenClosed = closedBy(byToken);
      await expectClosed(byCookie, async () => {
        const response = await hub.api("/api/v1/users/pia", { method: "PATCH", body: change });
        expect(response.status).toBe(200);
      });
      expect(await tokenClosed()).toBeLessThan(WITHIN_MS);
      password = change.password ?? password;
    }
    expect((await call("/api/v1/me", first)).status).toBe(401);
  });

  it("unsharing a session closes the socket that was watching it and its terminal", async () => {
    const ann = await person("ann");
    const ben = await person("ben");
    const sessionId = await sessionOf(ann);
    await api(`/api/v1/sessions/${sessionId}/access`, ann, {
      method: "PUT",
      body: { subject: "ben", access: "drive" },
    });
    const socket = await socketWith(ben);
    expect((await ackOf(socket, "session.subscribe", { sessionId })).ok).toBe(true);
    const created = await ackOf(socket, "pty.create", { commandId: uniqueId(), sessionId });
    expect(created.ok).toBe(true);
    const terminalId = (created as { data: { terminalId: string } }).data.terminalId;
    expect((await ackOf(socket, "pty.attach", { sessionId, terminalId })).ok).toBe(true);
    let output = "";
    socket.on("pty.data", (_id: string, chunk: Buffer | string) => (output += chunk.toString()));
    await expectClosed(socket, () =>
      api(`/api/v1/sessions/${sessionId}/access?subject=ben`, ann, { method: "DELETE" }),
    );
    output = "";
    const owner = await socketWith(ann);
    let seenByOwner = "";
    owner.on("pty.data", (_id: string, chunk: Buffer | string) => (seenByOwner += chunk.toString()));
    expect((await ackOf(owner, "pty.attach", { sessionId, terminalId })).ok).toBe(true);
    await ackOf(owner, "pty.input", { sessionId, terminalId, data: "echo after-$((40+2))\r" });
    await waitFor(() => seenByOwner.includes("after-42"), 10_000, "the owner's terminal output");
    expect(output).not.toContain("after-42");
  });

  it("lowering a share from drive to view closes the driving socket; raising it does not", async () => {
    const cat = await person("cat");
    const dan = await person("dan");
    const sessionId = await sessionOf(cat);
    const share = (access: string) =>
      api(`/api/v1/sessions/${sessionId}/access`, cat, { method: "PUT", body: { subject: "dan", access } });
    await share("view");
    const socket = await socketWith(dan);
    expect((await ackOf(socket, "session.subscribe", { sessionId })).ok).toBe(true);
    await share("drive");
    expect((await ackOf(socket, "session.subscribe", { sessionId })).ok).toBe(true);
    expect(socket.connected).toBe(true);
    await expectClosed(socket, () => share("view"));
  });

  it("a revoked share link closes its socket", async () => {
    const owner = await person("olga");
    const sessionId = await sessionOf(owner);
    const link = await api<{ id: string; token: string }>(`/api/v1/sessions/${sessionId}/share-links`, owner, {
      body: { scope: "drive", expires_in: 3600 },
    });
    const socket = io(hub.url, {
      auth: { share: link.token },
      transports: ["websocket"],
      forceNew: true,
      reconnection: false,
    });
    sockets.push(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", () => resolve());
      socket.once("connect_error", reject);
    });
    await expectClosed(socket, () =>
      api(`/api/v1/sessions/${sessionId}/share-links/${link.id}`, owner, { method: "DELETE" }),
    );
  });
});
