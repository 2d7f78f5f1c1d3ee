import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { createAuthPolicy } from "../../../server/transport/auth";

const policy = createAuthPolicy({ token: "secret-token-0123456789", host: "127.0.0.1", port: 4477 });
const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe("auth policy", () => {
  it("allows the loopback names with the right port only", () => {
    expect(policy.hostAllowed(req({ host: "127.0.0.1:4477" }))).toBe(true);
    expect(policy.hostAllowed(req({ host: "localhost:4477" }))).toBe(true);
    expect(policy.hostAllowed(req({ host: "[::1]:4477" }))).toBe(true);
    expect(policy.hostAllowed(req({ host: "127.0.0.1:4478" }))).toBe(false);
    expect(policy.hostAllowed(req({ host: "evil.example:4477" }))).toBe(false);
    expect(policy.hostAllowed(req({ host: "127.0.0.1.evil.example:4477" }))).toBe(false);
    expect(policy.hostAllowed(req({}))).toBe(false);
  });

  it("compares origins exactly: no null, no suffix or prefix matches", () => {
    expect(policy.originAllowed(req({}))).toBe(true);
    expect(policy.originAllowed(req({ origin: "http://127.0.0.1:4477" }))).toBe(true);
    expect(policy.originAllowed(req({ origin: "null" }))).toBe(false);
    expect(policy.originAllowed(req({ origin: "http://127.0.0.1:4477.evil.example" }))).toBe(false);
    expect(policy.originAllowed(req({ origin: "http://evil.example" }))).toBe(false);
    expect(policy.originAllowed(req({ origin: "https://127.0.0.1:4477" }))).toBe(false);
  });

  it("accepts the token as a Bearer header or the port's cookie, nothing else", () => {
    expect(policy.authenticated(req({ authorization: "Bearer secret-token-0123456789" }))).toBe("bearer");
    expect(policy.authenticated(req({ cookie: "a=b; worldline_token_4477=secret-token-0123456789" }))).toBe("cookie");
    expect(policy.authenticated(req({ cookie: "worldline_token_9999=secret-token-0123456789" }))).toBeNull();
    expect(policy.authenticated(req({ authorization: "Bearer wrong" }))).toBeNull();
    expect(policy.authenticated(req({ authorization: "Basic secret-token-0123456789" }))).toBeNull();
    expect(policy.tokenMatches("")).toBe(false);
    expect(policy.tokenMatches(undefined)).toBe(false);
  });

  it("sets an HttpOnly SameSite=Strict cookie", () => {
    expect(policy.sessionCookie()).toMatch(/HttpOnly/);
    expect(policy.sessionCookie()).toMatch(/SameSite=Strict/);
  });

  it("team mode: named tokens give their name, a balancer's host:port is allowed, the cookie is the deployment's", () => {
    const team = createAuthPolicy({
      token: "secret-token-0123456789",
      host: "0.0.0.0",
      port: 4478,
      extraHosts: ["lb.example:4477", "box"],
      named: [{ name: "carol", token: "carol-token-0123456789" }],
      team: true,
    });
    expect(team.tokenName("carol-token-0123456789")).toBe("carol");
    expect(team.tokenName("secret-token-0123456789")).toBe("default");
    expect(team.tokenName("carol-token-012345678")).toBeNull();
    expect(team.decider("carol", "http")).toBe("carol");
    expect(policy.decider("default", "http")).toBe("http");
    expect(team.hostAllowed(req({ host: "lb.example:4477" }))).toBe(true);
    expect(team.hostAllowed(req({ host: "lb.example:4478" }))).toBe(false);
    expect(team.hostAllowed(req({ host: "box:4478" }))).toBe(true);
    expect(team.originAllowed(req({ origin: "http://lb.example:4477" }))).toBe(true);
    expect(team.requestTokenName(req({ cookie: "worldline_token_team=carol-token-0123456789" }))).toBe("carol");
    expect(team.sessionCookie("carol-token-0123456789")).toMatch(/^worldline_token_team=carol-token-0123456789;/);
  });
});
