import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Socket } from "socket.io-client";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { startOidcProvider, type TestOidcProvider } from "../../support/oidc-provider";
import { queryTestDb } from "../../db";
import { ackOf, connectedSocket, emitCommand, startTestBridge, uniqueId, waitFor, type TestBridge } from "../helpers";
import { signInThroughProvider } from "./oidc-flow";

const CI_TOKEN = "ci-named-token-0123456789";

let fake: FakeLlm;
let provider: TestOidcProvider;
let hub: TestBridge;
const sockets: Socket[] = [];
/** Personal API tokens of the people made for these tests. */
const tokens: Record<string, string> = {};

beforeAll(async () => {
  fake = await startFakeLlm();
  provider = await startOidcProvider();
  hub = await startTestBridge({
    llmUrl: fake.url,
    env: {
      WORLDLINE_OIDC_ISSUER: provider.issuer,
      WORLDLINE_OIDC_CLIENT_ID: provider.clientId,
      WORLDLINE_OIDC_CLIENT_SECRET: provider.clientSecret,
      WORLDLINE_OIDC_DEFAULT_ROLE: "member",
      WORLDLINE_TOKENS: `ci:${CI_TOKEN}`,
    },
  });
  provider.allowRedirect(`${hub.url}/auth/oidc/callback`);
  for (const [name, role] of [
    ["ann", "member"],
    ["ben", "member"],
    ["vic", "viewer"],
  ] as const) {
    await hub.services.people.addUser({ name, role, password: `${name}-password-1` });
    tokens[name] = (await api(`/api/v1/me/tokens`, { as: await passwordCookie(name), body: { name: "test" } })).token;
  }
});
afterAll(async () => {
  for (const socket of sockets) socket.disconnect();
  await hub?.stop();
  await provider?.close();
  await fake?.close();
});

/** A request as someone: a personal token (`wlp_…`), a sign-in cookie header (`worldline_person_…=…`), or any Bearer token. */
async function call(
  pathname: string,
  init: { as: string; method?: string; body?: unknown } = { as: "" },
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (init.as.startsWith("worldline_person_")) {
    headers.cookie = init.as;
    headers["x-worldline-csrf"] = hub.services.auth.csrfToken;
  } else if (init.as) headers.authorization = `Bearer ${init.as}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${hub.url}${pathname}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function api(pathname: string, init: { as: string; method?: string; body?: unknown }): Promise<any> {
  const response = await call(pathname, init);
  const body = await response.json();
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function passwordCookie(name: string): Promise<string> {
  const response = await fetch(`${hub.url}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, password: `${name}-password-1` }),
  });
  expect(response.status).toBe(200);
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith("worldline_person_"));
  expect(cookie).toMatch(/HttpOnly/i);
  expect(cookie).toMatch(/SameSite=Lax/i);
  return cookie!.split(";")[0];
}

async function personSocket(token: string): Promise<Socket> {
  const socket = await connectedSocket(hub.url, { token });
  sockets.push(socket);
  return socket;
}

const ack = ackOf;

async function sessionOf(as: string): Promise<string> {
  return (await api("/api/v1/sessions", { as, body: { workspace: hub.workspace } })).id as string;
}

/** A session of `owner` whose turn waits on an approval for a shell command. */
async function waitingApproval(owner: string): Promise<{ sessionId: string; approvalId: string }> {
  const sessionId = await sessionOf(owner);
  fake.script({ toolCalls: [{ name: "shell", arguments: { command: "touch made-by-agent.txt" } }] }, { text: "done" });
  await emitCommand(await personSocket(owner), "turn.prompt", { commandId: uniqueId(), sessionId, text: "make it" });
  const approvalId = await waitFor(
    async () => {
      const pending = (await api("/api/v1/approvals?status=pending", { as: owner })) as {
        approval_id: string;
        session_id: string;
      }[];
      return pending.find((p) => p.session_id === sessionId)?.approval_id;
    },
    10_000,
    "approval request",
  );
  return { sessionId, approvalId };
}

describe("named people on a hub", () => {
  it("signs in through the OpenID Connect provider, and makes a person of the identity once", async () => {
    const first = await signInThroughProvider(hub.url, "olga");
    const me = await api("/api/v1/me", { as: first.cookie });
    expect(me).toEqual({ person: { name: "olga", display_name: "Test olga", role: "member" }, people: true });
    const again = await signInThroughProvider(hub.url, "olga");
    expect(again.cookie).not.toBe(first.cookie);
    const rows = await queryTestDb<{ n: number }>(hub.home, `SELECT COUNT(*) AS n FROM "User" WHERE "name" = 'olga'`);
    expect(Number(rows[0].n)).toBe(1);
    const identities = await queryTestDb<{ issuer: string }>(hub.home, `SELECT "issuer" FROM "Identity"`);
    expect(identities).toEqual([{ issuer: provider.issuer }]);
  });

  it("refuses a wrong password the same way as an unknown name, and stores only argon2id hashes", async () => {
    for (const body of [
      { name: "ann", password: "wrong-password" },
      { name: "nobody", password: "ann-password-1" },
    ]) {
      const response = await fetch(`${hub.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(401);
      expect(response.headers.getSetCookie()).toEqual([]);
    }
    const hashes = await queryTestDb<{ passwordHash: string }>(
      hub.home,
      `SELECT "passwordHash" FROM "User" WHERE "name" = 'ann'`,
    );
    expect(hashes[0].passwordHash).toMatch(/^\$argon2id\$/);
    const stored = await queryTestDb<{ tokenHash: string }>(hub.home, `SELECT "tokenHash" FROM "ApiToken"`);
    expect(stored.map((row) => row.tokenHash)).not.toContain(tokens.ann);
  });

  it("a page without a sign-in goes to the sign-in page; the API answers 401", async () => {
    const page = await fetch(`${hub.url}/s/abc`, { redirect: "manual" });
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe(`/signin?next=${encodeURIComponent("/s/abc")}`);
    expect((await call("/api/v1/sessions", { as: "" })).status).toBe(401);
    expect(await (await fetch(`${hub.url}/auth/options`)).json()).toEqual({ oidc: true, password: true });
  });

  it("a member cannot see another member's session, over HTTP or the socket", async () => {
    const sessionId = await sessionOf(tokens.ann);
    const bens = (await api("/api/v1/sessions", { as: tokens.ben })) as { id: string }[];
    expect(bens.map((s) => s.id)).not.toContain(sessionId);
    expect((await api("/api/v1/sessions", { as: tokens.ann })).map((s: { id: string }) => s.id)).toContain(sessionId);
    expect((await call(`/api/v1/sessions/${sessionId}`, { as: tokens.ben })).status).toBe(404);
    expect((await call(`/api/v1/sessions/${sessionId}/events`, { as: tokens.ben })).status).toBe(404);
    const chat = await call("/api/v1/chat/stream", { as: tokens.ben, body: { message: "hi", session_id: sessionId } });
    expect(chat.status).toBe(404);
    const socket = await personSocket(tokens.ben);
    const subscribed = await ack(socket, "session.subscribe", { sessionId, afterSeq: 0 });
    expect(subscribed).toMatchObject({ ok: false, error: { code: "auth:forbidden" } });
    // Admins see every session.
    await hub.services.people.addUser({ name: "ada", role: "admin", password: "ada-password-1" });
    const ada = (await api("/api/v1/me/tokens", { as: await passwordCookie("ada"), body: { name: "t" } })).token;
    expect((await call(`/api/v1/sessions/${sessionId}`, { as: ada })).status).toBe(200);
  });

  it("a view share lets a member read but not prompt; a drive share lets them prompt", async () => {
    const sessionId = await sessionOf(tokens.ann);
    const shared = await api(`/api/v1/sessions/${sessionId}/access`, {
      as: tokens.ann,
      method: "PUT",
      body: { subject: "ben", access: "view" },
    });
    expect(shared).toEqual([
      { subject: "ann", access: "owner" },
      { subject: "ben", access: "view" },
    ]);
    expect((await call(`/api/v1/sessions/${sessionId}`, { as: tokens.ben })).status).toBe(200);
    // Sharing is the owner's: a view share cannot share on.
    const reshare = await call(`/api/v1/sessions/${sessionId}/access`, {
      as: tokens.ben,
      method: "PUT",
      body: { subject: "vic", access: "drive" },
    });
    expect(reshare.status).toBe(403);
    const socket = await personSocket(tokens.ben);
    const presence = new Promise<{ viewers: { access: string }[] }>((resolve) =>
      socket.once("presence.state", resolve),
    );
    expect(await ack(socket, "session.subscribe", { sessionId, afterSeq: 0 })).toMatchObject({ ok: true });
    // Others see him as a viewer of this session.
    expect((await presence).viewers.map((viewer) => viewer.access)).toEqual(["view"]);
    expect(await ack(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "hi" })).toMatchObject({
      ok: false,
      error: { code: "auth:forbidden" },
    });
    const chat = await call("/api/v1/chat/stream", { as: tokens.ben, body: { message: "hi", session_id: sessionId } });
    expect(chat.status).toBe(403);

    await api(`/api/v1/sessions/${sessionId}/access`, {
      as: tokens.ann,
      method: "PUT",
      body: { subject: "ben", access: "drive" },
    });
    fake.script({ text: "hello ben" });
    // Access is re-read within a couple of seconds (server/people caches it briefly).
    await waitFor(
      async () => (await ack(socket, "turn.prompt", { commandId: uniqueId(), sessionId, text: "hi" })).ok || undefined,
      10_000,
      "drive share to apply",
    );
  });

  it("a viewer's approve and prompt get 403, on HTTP and on the socket; a member's decision names them", async () => {
    const { sessionId, approvalId } = await waitingApproval(tokens.ann);
    await api(`/api/v1/sessions/${sessionId}/access`, {
      as: tokens.ann,
      method: "PUT",
      body: { subject: "everyone", access: "drive" },
    });
    // Everyone may drive, but a viewer stays a viewer.
    expect((await call(`/api/v1/sessions/${sessionId}`, { as: tokens.vic })).status).toBe(200);
    const approve = await call(`/api/v1/approvals/${approvalId}`, {
      as: tokens.vic,
      body: { decision: "allow_once" },
    });
    expect(approve.status).toBe(403);
    const prompt = await call("/api/v1/chat/stream", {
      as: tokens.vic,
      body: { message: "hi", session_id: sessionId },
    });
    expect(prompt.status).toBe(403);
    expect((await call("/api/v1/sessions", { as: tokens.vic, body: { workspace: hub.workspace } })).status).toBe(403);
    const socket = await personSocket(tokens.vic);
    for (const [event, payload] of [
      ["turn.prompt", { commandId: uniqueId(), sessionId, text: "hi" }],
      ["approval.decide", { commandId: uniqueId(), approvalId, decision: "allow_once" }],
      ["pty.input", { sessionId, terminalId: "t1", data: "ls\r" }],
      ["pty.create", { commandId: uniqueId(), sessionId }],
    ] as const) {
      expect(await ack(socket, event, payload), event).toMatchObject({ ok: false, error: { code: "auth:forbidden" } });
    }
    expect(await ack(socket, "session.subscribe", { sessionId, afterSeq: 0 })).toMatchObject({ ok: true });

    // Ben (a member, drive through "everyone") approves: the record names him.
    const decided = await api(`/api/v1/approvals/${approvalId}`, { as: tokens.ben, body: { decision: "allow_once" } });
    expect(decided.decided_by).toBe("ben");
    const audit = await waitFor(
      async () => {
        const rows = await queryTestDb<{ decidedBy: string; command: string }>(
          hub.home,
          `SELECT "decidedBy", "command" FROM "AuditCommand" WHERE "sessionId" = '${sessionId}'`,
        );
        return rows.length > 0 ? rows : undefined;
      },
      10_000,
      "audit record",
    );
    expect(audit[0]).toMatchObject({ decidedBy: "ben", command: "touch made-by-agent.txt" });
  });

  it("a personal token works as Bearer until revoked; a revoked one is refused at once", async () => {
    const created = await api("/api/v1/me/tokens", { as: tokens.ann, body: { name: "script" } });
    expect(created.token).toMatch(/^wlp_/);
    expect((await api("/api/v1/me", { as: created.token })).person.name).toBe("ann");
    const listed = (await api("/api/v1/me/tokens", { as: tokens.ann })) as { id: string; name: string }[];
    expect(listed.map((t) => t.name)).toContain("script");
    expect(JSON.stringify(listed)).not.toContain(created.token);
    await api(`/api/v1/me/tokens/${created.id}`, { as: tokens.ann, method: "DELETE" });
    expect((await call("/api/v1/me", { as: created.token })).status).toBe(401);
    await expect(personSocket(created.token)).rejects.toThrow(/unauthorized/);
    // Someone else's token id is not theirs to revoke.
    expect((await call(`/api/v1/me/tokens/${listed[0].id}`, { as: tokens.ben, method: "DELETE" })).status).toBe(404);
  });

  it("a disabled person is refused on their next request", async () => {
    await hub.services.people.addUser({ name: "dan", role: "member", password: "dan-password-1" });
    const cookie = await passwordCookie("dan");
    expect((await call("/api/v1/me", { as: cookie })).status).toBe(200);
    await hub.services.people.updateUser("dan", { disabled: true });
    expect((await call("/api/v1/me", { as: cookie })).status).toBe(401);
  });

  it("only admins manage people", async () => {
    expect((await call("/api/v1/users", { as: tokens.ann })).status).toBe(403);
    expect(
      (
        await call("/api/v1/users", {
          as: tokens.ann,
          body: { name: "eve", role: "admin", password: "eve-password-1" },
        })
      ).status,
    ).toBe(403);
    expect((await call("/api/v1/settings/providers", { as: tokens.ann, body: {} })).status).toBe(403);
  });

  it("WORLDLINE_TOKENS and the launch token still work, as before, beside people", async () => {
    const all = (await api("/api/v1/sessions", { as: CI_TOKEN })) as { id: string }[];
    const anns = (await api("/api/v1/sessions", { as: tokens.ann })) as { id: string }[];
    expect(all.length).toBeGreaterThanOrEqual(anns.length);
    expect((await api("/api/v1/me", { as: CI_TOKEN })).person).toBeNull();
    const { approvalId } = await waitingApproval(tokens.ann);
    const decided = await api(`/api/v1/approvals/${approvalId}`, { as: CI_TOKEN, body: { decision: "reject" } });
    expect(decided.decided_by).toBe("ci");
    expect((await hub.api("/api/v1/sessions")).status).toBe(200);
  });
});

describe("a bridge without people (single-token mode)", () => {
  it("keeps the token page and has no sign-in", async () => {
    const local = await startTestBridge();
    try {
      const page = await fetch(`${local.url}/`, { redirect: "manual" });
      expect(page.status).toBe(401);
      expect(await page.text()).toContain("Worldline needs its token");
      expect((await fetch(`${local.url}/auth/options`, { redirect: "manual" })).status).toBe(401);
      expect((await fetch(`${local.url}/signin`, { redirect: "manual" })).status).toBe(401);
      const login = await fetch(`${local.url}/?token=${local.token}`, { redirect: "manual" });
      expect(login.status).toBe(302);
      expect((await local.api("/api/v1/me")).status).toBe(200);
      expect(await (await local.api("/api/v1/me")).json()).toEqual({ person: null, people: false });
    } finally {
      await local.stop();
    }
  });
});

describe("guessing passwords and tampering with the OpenID Connect round trip", () => {
  it("refuses a name after ten wrong passwords, with 429, even with the right one", async () => {
    await hub.services.people.addUser({ name: "gus", role: "member", password: "gus-password-1" });
    const attempt = (password: string) =>
      fetch(`${hub.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "gus", password }),
      });
    for (let i = 0; i < 10; i += 1) expect((await attempt(`wrong-${i}`)).status).toBe(401);
    const locked = await attempt("gus-password-1");
    expect(locked.status).toBe(429);
    expect(((await locked.json()) as { error: { code: string } }).error.code).toBe("auth:rate_limited");
  });

  it("a callback without the hub's signed state goes back to the sign-in page with the reason", async () => {
    const response = await fetch(`${hub.url}/auth/oidc/callback?code=stolen&state=guessed`, { redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/signin?error=expired");
    expect(response.headers.getSetCookie().some((line) => line.startsWith("worldline_person_"))).toBe(false);
    const forged = await fetch(`${hub.url}/auth/oidc/callback?code=x&state=y`, {
      redirect: "manual",
      headers: { cookie: `${hub.services.auth.oidcCookieName}=eyJzdGF0ZSI6InkifQ.forged-mac` },
    });
    expect(forged.headers.get("location")).toBe("/signin?error=expired");
  });

  it("never sends the browser off the hub after the OpenID Connect callback, however `next` is written", async () => {
    const vectors = [
      "/%09/evil.example",
      "/\t/evil.example",
      "//evil.example",
      "/\\evil.example",
      "https://evil.example",
    ];
    for (const [index, next] of [...vectors, "/.//evil.example"].entries()) {
      const { location } = await signInThroughProvider(hub.url, `nomad${index}`, undefined, decodeURIComponent(next));
      expect(new URL(location, hub.url).origin, next).toBe(new URL(hub.url).origin);
      expect(location, next).toMatch(/^\/(?![/\\\t])/);
    }
    const { location } = await signInThroughProvider(hub.url, "nomad-home", undefined, "/s/abc?tab=files");
    expect(location).toBe("/s/abc?tab=files");
  });

  it("an identity whose name is `everyone` gets another name; an admin cannot make one either", async () => {
    const { cookie } = await signInThroughProvider(hub.url, "everyone");
    const me = (await (await fetch(`${hub.url}/api/v1/me`, { headers: { cookie } })).json()) as {
      person: { name: string };
    };
    expect(me.person.name).not.toBe("everyone");
    expect(me.person.name).toMatch(/^everyone-\d+$/);
    const made = await call("/api/v1/users", { as: hub.token, body: { name: "everyone", role: "member" } });
    expect(made.status).toBe(400);
  });

  it("a failed callback shows a known code, never text from the link", async () => {
    const response = await fetch(`${hub.url}/auth/oidc/callback?code=x&state=y&error=Call+us`, { redirect: "manual" });
    expect(response.headers.get("location")).toBe("/signin?error=expired");
  });

  it("sends the browser only to paths of the hub after signing in", async () => {
    const response = await fetch(`${hub.url}/auth/oidc/start?next=${encodeURIComponent("//evil.example/x")}`, {
      redirect: "manual",
    });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("location") ?? "");
    expect(location.origin).toBe(provider.issuer);
    const pending = response.headers.getSetCookie().find((line) => line.startsWith(hub.services.auth.oidcCookieName));
    const body = pending!.split("=")[1].split(".")[0];
    expect(JSON.parse(Buffer.from(body, "base64url").toString("utf8")).next).toBe("/");
  });
});
