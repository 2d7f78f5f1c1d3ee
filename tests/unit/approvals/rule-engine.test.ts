import { describe, expect, it } from "vitest";
import { matchRules, type RuleLike } from "../../../server/approvals";

let counter = 0;
function rule(tool: string, pattern: string, action: string, extra: Partial<RuleLike> = {}): RuleLike {
  counter += 1;
  return { id: `r${counter}`, scope: "session", tool, pattern, action, ...extra };
}

const shell = (subject: string, compound = false) => ({ tool: "shell", subject, compound });

describe("rule patterns", () => {
  it("an allow for `git status*` covers git status with flags and paths, not git push nor a longer word", () => {
    const rules = [rule("shell", "git status*", "allow")];
    expect(matchRules(rules, shell("git status"))?.action).toBe("allow");
    expect(matchRules(rules, shell("git status --short src/deep/file.ts"))?.action).toBe("allow");
    expect(matchRules(rules, shell("git push origin main"))).toBeNull();
    expect(matchRules(rules, shell("git statusx"))).toBeNull();
  });

  it("path patterns follow glob semantics: `src/**` is recursive, `src/*` one level", () => {
    const deep = { tool: "write_file", subject: "src/a/b.ts" };
    expect(matchRules([rule("write_file", "src/**", "allow")], deep)?.action).toBe("allow");
    expect(matchRules([rule("write_file", "src/*", "allow")], deep)).toBeNull();
    expect(
      matchRules([rule("write_file", "src/*", "allow")], { tool: "write_file", subject: "src/a.ts" })?.action,
    ).toBe("allow");
    expect(matchRules([rule("write_file", "*", "deny")], { tool: "write_file", subject: ".env" })?.action).toBe("deny");
  });

  it("the tool name is a glob too, and rules of other tools never match", () => {
    expect(matchRules([rule("mcp__*", "*", "allow")], { tool: "mcp__github__search", subject: "x" })?.action).toBe(
      "allow",
    );
    expect(matchRules([rule("write_file", "*", "deny")], shell("ls"))).toBeNull();
  });
});

describe("precedence", () => {
  it("deny beats allow whatever the scopes and the order", () => {
    const rules = [
      rule("shell", "git *", "allow", { scope: "session" }),
      rule("shell", "git push*", "deny", { scope: "global" }),
    ];
    expect(matchRules(rules, shell("git push origin"))?.action).toBe("deny");
    expect(matchRules(rules.slice().reverse(), shell("git push origin"))?.action).toBe("deny");
    expect(matchRules(rules, shell("git log"))?.action).toBe("allow");
  });

  it("ask beats allow, deny beats ask", () => {
    expect(
      matchRules([rule("shell", "npm *", "allow"), rule("shell", "npm publish*", "ask")], shell("npm publish"))?.action,
    ).toBe("ask");
    expect(matchRules([rule("shell", "npm *", "ask"), rule("*", "*", "deny")], shell("npm publish"))?.action).toBe(
      "deny",
    );
  });

  it("unknown actions are ignored", () => {
    expect(matchRules([rule("shell", "*", "maybe")], shell("ls"))).toBeNull();
  });
});

describe("expiry", () => {
  it("an expired rule no longer matches; one expiring later still does", () => {
    const now = new Date("2026-11-21T12:00:00Z");
    const expired = rule("shell", "ls*", "allow", { expiresAt: new Date("2026-11-21T11:59:59Z") });
    const live = rule("shell", "ls*", "deny", { expiresAt: new Date("2026-11-21T12:00:01Z") });
    expect(matchRules([expired], shell("ls"), now)).toBeNull();
    expect(matchRules([expired, live], shell("ls"), now)?.action).toBe("deny");
    expect(matchRules([live], shell("ls"), new Date("2026-11-21T12:00:01Z"))).toBeNull();
  });
});

describe("compound commands", () => {
  it("a wildcard allow never approves a chained line; only the exact text does", () => {
    const line = "git status; rm -rf ~";
    expect(matchRules([rule("shell", "git status*", "allow")], shell(line, true))).toBeNull();
    expect(matchRules([rule("shell", "*", "allow")], shell(line, true))).toBeNull();
    expect(matchRules([rule("shell", line, "allow")], shell(line, true))?.action).toBe("allow");
  });

  it("a deny or ask catches any part of a chained, piped or substituted line", () => {
    const deny = [rule("shell", "rm *", "deny")];
    expect(matchRules(deny, shell("ls && rm -rf build", true))?.action).toBe("deny");
    expect(matchRules(deny, shell("cat x | rm -f y", true))?.action).toBe("deny");
    expect(matchRules(deny, shell("echo $(rm -rf y)", true))?.action).toBe("deny");
    expect(matchRules([rule("shell", "curl*", "ask")], shell("ls; curl example.com", true))?.action).toBe("ask");
    expect(matchRules([rule("shell", "*", "deny")], shell("ls; pwd", true))?.action).toBe("deny");
  });
});
