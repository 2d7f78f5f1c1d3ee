import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { io, type Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNNER_SOCKET_PATH } from "../../../server/protocol";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { ackOf, startTestBridge, type TestBridge } from "../helpers";

/** The smaller holes of a hub with people (SECURITY.md, "Sockets, memories and sign-in on a hub"). */
let fake: FakeLlm;
let hub: TestBridge;
const tokens: Record<string, string> = {};
const sockets: Socket[] = [];

beforeAll(async () => {
  fake = await startFakeLlm();
  // Behind a TLS proxy: the public URL is https, the test still talks to the bridge's own port.
  hub = await startTestBridge({ llmUrl: fake.url, env: { WORLDLINE_PUBLIC_URL: "https://hub.example.com" } });
  for (const name of ["ann", "ben"]) {
    await hub.services.people.addUser({ name, role: "member", password: `${name}-password-1` });
    const user = (await hub.services.people.listUsers()).find((candidate) => candidate.name === name)!;
    tokens[name] = (await hub.services.people.createApiToken(user.id, { name: "t" })).token;
  }
});
afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  await hub?.stop();
  await fake?.close();
});

async function as(name: string, pathname: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  return fetch(`${hub.url}${pathname}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${tokens[name]}`, "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function sessionOf(name: string): Promise<string> {
  return ((await (await as(name, "/api/v1/sessions", { body: { workspace: hub.workspace } })).json()) as { id: string })
    .id;
}

async function socketOf(name: string): Promise<Socket> {
  const socket = io(hub.url, { auth: { token: tokens[name] }, transports: ["websocket"], forceNew: true });
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("connect_error", reject);
  });
  return socket;
}

describe("a hub's smaller holes", () => {
  it("sign-in cookies are Secure when the public URL is https", async () => {
    const response = await fetch(`${hub.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "ann", password: "ann-password-1" }),
    });
    expect(response.status).toBe(200);
    const cookie = response.headers.getSetCookie().find((line) => line.startsWith(hub.services.auth.personCookieName));
    expect(cookie).toMatch(/;\s*Secure/i);
    expect(hub.services.auth.sessionCookie()).toMatch(/;\s*Secure/i);
  });

  it("one person's commandId never answers another person's command", async () => {
    const annSession = await sessionOf("ann");
    const benSession = await sessionOf("ben");
    const commandId = "same-command-id-on-two-tabs";
    const annAck = await ackOf(await socketOf("ann"), "pty.create", { commandId, sessionId: annSession });
    const benAck = await ackOf(await socketOf("ben"), "pty.create", { commandId, sessionId: benSession });
    expect(annAck.ok && benAck.ok).toBe(true);
    const ids = [annAck, benAck].map((ack) => (ack as { data: { terminalId: string } }).data.terminalId);
    expect(ids[0]).not.toBe(ids[1]);
    expect((benAck as { data: { sessionId: string } }).data.sessionId).toBe(benSession);
    // The same person re-sending it (a reconnect's replay) still gets the first answer.
    const again = await ackOf(await socketOf("ann"), "pty.create", { commandId, sessionId: annSession });
    expect((again as { data: { terminalId: string } }).data.terminalId).toBe(ids[0]);
  });

  it("the runners' socket path refuses a Host that is not the hub's", async () => {
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const request = http.request(`${hub.url}${RUNNER_SOCKET_PATH}?EIO=4&transport=websocket`, {
          headers: {
            host,
            connection: "Upgrade",
            upgrade: "websocket",
            "sec-websocket-version": "13",
            "sec-websocket-key": Buffer.from("0123456789abcdef").toString("base64"),
          },
        });
        request.on("upgrade", (response, socket) => {
          socket.destroy();
          resolve(response.statusCode ?? 0);
        });
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on("error", reject);
        request.end();
      });
    expect(await status(new URL(hub.url).host)).toBe(101);
    expect(await status("rebound.evil.example")).not.toBe(101);
  });

  it("a drive share cannot switch the session's mode through chat/stream", async () => {
    const sessionId = await sessionOf("ann");
    await as("ann", `/api/v1/sessions/${sessionId}/access`, {
      method: "PUT",
      body: { subject: "ben", access: "drive" },
    });
    fake.script({ text: "ok" });
    const response = await as("ben", "/api/v1/chat/stream", {
      body: { message: "hi", session_id: sessionId, mode: "plan" },
    });
    expect(response.status).toBe(403);
    await response.body?.cancel();
    const session = (await (await as("ann", `/api/v1/sessions/${sessionId}`)).json()) as { mode: string };
    expect(session.mode).not.toBe("plan");
  });

  it("a view link cannot read who else the session is shared with; a drive link still can", async () => {
    const sessionId = await sessionOf("ann");
    const linkOf = async (scope: string) =>
      (
        (await (await as("ann", `/api/v1/sessions/${sessionId}/share-links`, { body: { scope } })).json()) as {
          token: string;
        }
      ).token;
    const read = async (token: string) =>
      (await fetch(`${hub.url}/api/v1/sessions/${sessionId}/access`, { headers: { authorization: `Bearer ${token}` } }))
        .status;
    expect(await read(await linkOf("view"))).toBe(403);
    expect(await read(await linkOf("drive"))).toBe(200);
  });

  it("recent folders and a session's rules are a person's own", async () => {
    // Under the hub's root for members (WORLDLINE_HUB_ROOTS: the test bridge's workspace).
    const own = await fs.realpath(await fs.mkdtemp(path.join(hub.workspace, "ann-only-")));
    const response = await as("ann", "/api/v1/sessions", { body: { workspace: own } });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as { id: string };
    const recent = async (name: string) =>
      ((await (await as(name, "/api/v1/workspaces/recent")).json()) as { path: string }[]).map((w) => w.path);
    expect(await recent("ann")).toContain(own);
    expect(await recent("ben")).not.toContain(own);
    expect((await as("ann", `/api/v1/rules?session_id=${id}`)).status).toBe(200);
    expect((await as("ben", `/api/v1/rules?session_id=${id}`)).status).toBe(404);
  });

  it("testing a connection sends a stored key only to that provider's stored URL", async () => {
    const seen: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const other = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const saved = await hub.api("/api/v1/settings/providers", {
        body: {
          id: "stored",
          kind: "openai_compatible",
          name: "Stored",
          baseURL: fake.url,
          apiKey: "sk-stored-0123456789",
        },
      });
      expect(saved.status).toBe(200);
      const test = (body: unknown) => hub.api("/api/v1/settings/test-connection", { body });
      expect((await test({ providerId: "stored", baseURL: other })).status).toBe(200);
      expect((await test({ providerId: "stored", baseURL: other, apiKey: "sk-given-0123456789" })).status).toBe(200);
      expect(seen).toEqual([undefined, "Bearer sk-given-0123456789"]);
      expect((await test({ providerId: "stored" })).status).toBe(200);
      expect(JSON.stringify(seen)).not.toContain("sk-stored");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("the CSRF refusal reads as written (redaction finds no token in it)", async () => {
    const login = await fetch(`${hub.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "ann", password: "ann-password-1" }),
    });
    const cookie = login.headers.getSetCookie()[0].split(";")[0];
    const response = await fetch(`${hub.url}/api/v1/sessions`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json" },
      body: JSON.stringify({ workspace: hub.workspace }),
    });
    expect(response.status).toBe(403);
    const { error } = (await response.json()) as { error: { message: string } };
    expect(error.message).toBe(
      "Missing CSRF header (x-worldline-csrf). A script can send its token in an Authorization: Bearer header.",
    );
  });
});
