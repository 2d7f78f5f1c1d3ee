import { describe, expect, it } from "vitest";
import { sameOriginPath, SIGN_IN_ERRORS, signInErrorText } from "../../../server/protocol";

const HUB = "https://hub.example.com";

describe("where the browser goes after signing in", () => {
  it.each([
    "/%09/evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "\t//evil.example",
    "//evil.example",
    "///evil.example",
    "/\\evil.example",
    "\\\\evil.example",
    "/\\/evil.example",
    "https://evil.example/",
    "http://hub.example.com/",
    "HTTPS://evil.example",
    "https:evil.example",
    "javascript:alert(1)",
    "data:text/html,hi",
    "/.//evil.example",
    "/x/..//evil.example",
    "https://hub.example.com@evil.example/",
  ])("%j stays on the hub", (next) => {
    const path = sameOriginPath(decodeURIComponent(encodeURIComponent(next)), HUB);
    const landed = new URL(path, HUB);
    expect(landed.origin).toBe(HUB);
    expect(path).toMatch(/^\/(?![/\\])/);
  });

  it("decoded %09 (what URLSearchParams hands over) lands on /", () => {
    const next = new URLSearchParams("next=/%09/evil.example").get("next");
    expect(sameOriginPath(next, HUB)).toBe("/");
  });

  it("keeps a path of the hub, with its query and fragment", () => {
    expect(sameOriginPath("/s/abc?tab=files#x", HUB)).toBe("/s/abc?tab=files#x");
    expect(sameOriginPath("https://hub.example.com/approvals", HUB)).toBe("/approvals");
    expect(sameOriginPath(null, HUB)).toBe("/");
    expect(sameOriginPath("", HUB)).toBe("/");
  });
});

describe("the sign-in page's error", () => {
  it("shows only fixed texts: a known code's, else the general one", () => {
    expect(signInErrorText("expired")).toBe(SIGN_IN_ERRORS.expired);
    expect(signInErrorText("Your account was hacked, call +1 555 0100")).toBe(SIGN_IN_ERRORS.failed);
    expect(signInErrorText("__proto__")).toBe(SIGN_IN_ERRORS.failed);
    expect(signInErrorText(null)).toBeNull();
  });
});
