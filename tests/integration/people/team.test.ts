import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_POSTGRES } from "../../db";
import { databaseUrl, onAdmin } from "./team-db";
import { startOidcProvider, type TestOidcProvider } from "../../support/oidc-provider";
import { startTestBridge, type TestBridge } from "../helpers";
import { signInThroughProvider } from "./oidc-flow";
import { freePort } from "../../support/ports";

/**
 * A hub in team mode: two bridges on one PostgreSQL database and one Redis, behind one public
 * address (WORLDLINE_PUBLIC_URL). Sign-in state lives in signed cookies and the database, never
 * in one bridge's memory, so a browser may sign in through one and be served by the other.
 */
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

let provider: TestOidcProvider;
let database: string;
let a: TestBridge;
let b: TestBridge;

// Team mode is PostgreSQL + Redis: it runs in the PostgreSQL pass (package.json, test:integration:postgres).
describe.skipIf(!TEST_POSTGRES)("named people on a team of bridges", () => {
  beforeAll(async () => {
    provider = await startOidcProvider();
    database = `wlt_people_team_${randomUUID().slice(0, 8)}`;
    await onAdmin(`CREATE DATABASE ${database}`);
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: databaseUrl(database),
      REDIS_URL,
      WORLDLINE_REDIS_PREFIX: `wlt-people-${randomUUID().slice(0, 8)}`,
      WORLDLINE_OIDC_ISSUER: provider.issuer,
      WORLDLINE_OIDC_CLIENT_ID: provider.clientId,
      WORLDLINE_OIDC_CLIENT_SECRET: provider.clientSecret,
      WORLDLINE_OIDC_DEFAULT_ROLE: "member",
      WORLDLINE_PUBLIC_URL: publicUrl,
    };
    a = await startTestBridge({ env: { ...env, PORT: String(port) } });
    b = await startTestBridge({ env });
    provider.allowRedirect(`${publicUrl}/auth/oidc/callback`);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
    await provider?.close();
    if (database) await onAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it("signs in through one bridge with the provider's answer landing on the other, and is known to both", async () => {
    const { cookie } = await signInThroughProvider(a.url, "tess", b.url);
    expect(cookie).toMatch(/^worldline_person_team=wlc_/);
    for (const bridge of [a, b]) {
      const response = await fetch(`${bridge.url}/api/v1/me`, { headers: { cookie } });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { person: { name: string } }).person.name).toBe("tess");
    }
  });

  it("a session one person makes on one bridge stays hidden from another person on the other", async () => {
    await a.services.people.addUser({ name: "uma", role: "member", password: "uma-password-1" });
    await a.services.people.addUser({ name: "vera", role: "member", password: "vera-password-1" });
    const tokenOf = async (name: string) => {
      const user = (await a.services.people.listUsers()).find((candidate) => candidate.name === name)!;
      return (await a.services.people.createApiToken(user.id, { name: "t" })).token;
    };
    const uma = await tokenOf("uma");
    const vera = await tokenOf("vera");
    const created = await fetch(`${a.url}/api/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${uma}`, "content-type": "application/json" },
      body: JSON.stringify({ workspace: a.workspace }),
    });
    const { id } = (await created.json()) as { id: string };
    const seenBy = async (token: string) =>
      (await fetch(`${b.url}/api/v1/sessions/${id}`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await seenBy(uma)).toBe(200);
    expect(await seenBy(vera)).toBe(404);
  });
});
