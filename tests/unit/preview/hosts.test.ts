import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { parsePreviewHost, previewOrigin } from "../../../server/preview/host-name";
import { PreviewGrants } from "../../../server/preview/grants";
import { safePath } from "../../../server/preview/proxy";

const withCookie = (cookie: string) => ({ headers: { cookie } }) as unknown as IncomingMessage;

describe("preview host names", () => {
  it("reads the port and session of a preview host on the bridge's port", () => {
    expect(parsePreviewHost("p5173-cmx0abc.localhost:4000", 4000)).toEqual({ port: 5173, sessionId: "cmx0abc" });
    expect(parsePreviewHost("P5173-CMX0ABC.LOCALHOST:4000", 4000)).toEqual({ port: 5173, sessionId: "cmx0abc" });
    expect(previewOrigin({ port: 5173, sessionId: "cmx0abc" }, 4000)).toBe("http://p5173-cmx0abc.localhost:4000");
  });

  it("leaves the IDE's own hosts and other ports to the IDE", () => {
    for (const host of ["127.0.0.1:4000", "localhost:4000", "p5173-x.localhost:4001", "example.com", undefined])
      expect(parsePreviewHost(host, 4000)).toBeUndefined();
  });

  it("calls anything else under .localhost on the bridge's port malformed", () => {
    for (const host of [
      "x.localhost:4000",
      "p0-abc.localhost:4000",
      "p70000-abc.localhost:4000",
      "p80-.localhost:4000",
      "p80-a.b.localhost:4000",
      "p80-a%20b.localhost:4000",
    ])
      expect(parsePreviewHost(host, 4000)).toBe("malformed");
  });

  it("goes on only to same-origin paths", () => {
    expect(safePath("/a?b=1")).toBe("/a?b=1");
    for (const next of [null, "", "//evil.example/", "/\\evil", "http://evil.example/", "a"])
      expect(safePath(next)).toBe("/");
  });
});

describe("preview grants", () => {
  const target = { sessionId: "cmx0abc", port: 3000 };

  it("redeems a ticket once, for its own target only", () => {
    const grants = new PreviewGrants("secret");
    const ticket = grants.issueTicket(target);
    expect(grants.redeem(ticket, { ...target, port: 3001 })).toBe(false);
    const again = grants.issueTicket(target);
    expect(grants.redeem(again, target)).toBe(true);
    expect(grants.redeem(again, target)).toBe(false);
    expect(grants.redeem("made-up", target)).toBe(false);
  });

  it("sets an HttpOnly host-only cookie that opens its own target and no other", () => {
    const grants = new PreviewGrants("secret");
    const cookie = grants.cookie(target);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=None/);
    expect(cookie).toMatch(/Partitioned/);
    expect(cookie).not.toMatch(/Domain=/);
    const pair = cookie.split(";")[0];
    expect(grants.allowed(withCookie(pair), target)).toBe(true);
    expect(grants.allowed(withCookie(pair), { ...target, port: 3001 })).toBe(false);
    expect(grants.allowed(withCookie(pair), { ...target, sessionId: "cmx0other" })).toBe(false);
    // Another bridge's secret, a tampered value, an expired one.
    expect(new PreviewGrants("other").allowed(withCookie(pair), target)).toBe(false);
    expect(grants.allowed(withCookie(pair.replace(/.$/, (c) => (c === "A" ? "B" : "A"))), target)).toBe(false);
    const [name, value] = pair.split("=");
    const mac = value.split(".")[1];
    expect(grants.allowed(withCookie(`${name}=1000.${mac}`), target)).toBe(false);
  });

  it("strips only its own cookie from what the dev server gets", () => {
    expect(PreviewGrants.withoutGrant("a=1; worldline_preview=x.y; b=2")).toBe("a=1; b=2");
    expect(PreviewGrants.withoutGrant("worldline_preview=x.y")).toBeUndefined();
    expect(PreviewGrants.withoutGrant(undefined)).toBeUndefined();
  });
});
