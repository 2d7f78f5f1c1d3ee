import { describe, expect, it } from "vitest";
import {
  effectiveLevel,
  httpNeed,
  sessionHttpAllowed,
  sessionSocketAllowed,
  socketNeed,
} from "../../../server/people/policy";
import { createApiRouter } from "../../../server/transport/http";

describe("people policy", () => {
  it("gives admins everything, caps viewers at view, and members what they were given", () => {
    expect(effectiveLevel("admin", null)).toBe("owner");
    expect(effectiveLevel("member", null)).toBeNull();
    expect(effectiveLevel("member", "drive")).toBe("drive");
    expect(effectiveLevel("viewer", "owner")).toBe("view");
    expect(effectiveLevel("viewer", "drive")).toBe("view");
    expect(effectiveLevel("viewer", null)).toBeNull();
  });

  it("sends session, approval and task routes to the session check, and defaults the rest to admin", () => {
    expect(httpNeed("GET", "/api/v1/sessions/s1/events")).toEqual({ kind: "session", sessionId: "s1" });
    expect(httpNeed("GET", "/api/v1/conversations/s1")).toEqual({ kind: "session", sessionId: "s1" });
    expect(httpNeed("POST", "/api/v1/approvals/a1")).toEqual({ kind: "approval", approvalId: "a1", drive: true });
    expect(httpNeed("GET", "/api/v1/tasks/t1/events")).toEqual({ kind: "task", taskId: "t1", drive: false });
    expect(httpNeed("POST", "/api/v1/sessions")).toEqual({ kind: "role", role: "member" });
    expect(httpNeed("GET", "/api/v1/sessions")).toEqual({ kind: "role", role: "viewer" });
    expect(httpNeed("POST", "/api/v1/settings/providers")).toEqual({ kind: "role", role: "admin" });
    expect(httpNeed("GET", "/api/v1/audit/commands")).toEqual({ kind: "role", role: "admin" });
    // Runners: members list them (to pick one for a session); enrolling, renaming and revoking are an admin's.
    expect(httpNeed("GET", "/api/v1/runners")).toEqual({ kind: "role", role: "member" });
    for (const [method, route] of [
      ["POST", "/api/v1/runners"],
      ["PATCH", "/api/v1/runners/devbox"],
      ["DELETE", "/api/v1/runners/devbox"],
    ])
      expect(httpNeed(method, route)).toEqual({ kind: "role", role: "admin" });
    expect(httpNeed("GET", "/api/v1/a-route-added-later")).toEqual({ kind: "role", role: "admin" });
  });

  it("lets viewers use no route that changes anything outside their own tokens and push devices", () => {
    for (const route of createApiRouter().list()) {
      const need = httpNeed(route.method, route.path.replace(/:([a-z_]+)/gi, "x"));
      if (route.method === "GET" || need.kind !== "role" || need.role !== "viewer") continue;
      expect(route.path, `${route.method} ${route.path}`).toMatch(/^\/api\/v1\/(me\/tokens|push\/subscriptions)/);
    }
  });

  it("a view level reads a session; drive acts on it; neither changes its settings or shares", () => {
    expect(sessionHttpAllowed("view", "s1", "GET", "/api/v1/sessions/s1/events")).toBe(true);
    expect(sessionHttpAllowed("view", "s1", "GET", "/api/v1/conversations/s1")).toBe(true);
    expect(sessionHttpAllowed("view", "s1", "POST", "/api/v1/sessions/s1/cancel")).toBe(false);
    expect(sessionHttpAllowed("drive", "s1", "POST", "/api/v1/sessions/s1/cancel")).toBe(true);
    expect(sessionHttpAllowed("drive", "s1", "PATCH", "/api/v1/sessions/s1")).toBe(false);
    expect(sessionHttpAllowed("drive", "s1", "PUT", "/api/v1/sessions/s1/access")).toBe(false);
    expect(sessionHttpAllowed("owner", "s1", "DELETE", "/api/v1/sessions/s1")).toBe(true);
  });

  it("on the socket: a view level subscribes but cannot prompt or type; unknown commands are admin-only", () => {
    const prompt = { sessionId: "s1", text: "hi" };
    expect(socketNeed("turn.prompt", prompt)).toEqual({ kind: "session", sessionId: "s1" });
    expect(sessionSocketAllowed("view", "s1", "session.subscribe", { sessionId: "s1" })).toBe(true);
    expect(sessionSocketAllowed("view", "s1", "turn.prompt", prompt)).toBe(false);
    expect(sessionSocketAllowed("view", "s1", "pty.input", { sessionId: "s1" })).toBe(false);
    expect(sessionSocketAllowed("drive", "s1", "pty.input", { sessionId: "s1" })).toBe(true);
    expect(socketNeed("approval.decide", { approvalId: "a1" })).toEqual({ kind: "approval", approvalId: "a1" });
    expect(socketNeed("pty.ack", { terminalId: "t" })).toEqual({ kind: "free" });
    expect(socketNeed("something.new", {})).toEqual({ kind: "role", role: "admin" });
  });
});
