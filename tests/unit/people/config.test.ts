import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../server/config";

describe("OpenID Connect settings", () => {
  it("are off unless all three variables are set, and refuse a partial set by name", () => {
    expect(loadConfig({ WORLDLINE_HOME: "/tmp/x" }).oidc).toBeNull();
    const full = loadConfig({
      WORLDLINE_HOME: "/tmp/x",
      WORLDLINE_OIDC_ISSUER: "https://id.example.com/realms/eng",
      WORLDLINE_OIDC_CLIENT_ID: "worldline",
      WORLDLINE_OIDC_CLIENT_SECRET: "s3cret",
      WORLDLINE_PUBLIC_URL: "https://ide.example.com/",
    });
    expect(full.oidc).toEqual({
      issuer: "https://id.example.com/realms/eng",
      clientId: "worldline",
      clientSecret: "s3cret",
    });
    expect(full.oidcDefaultRole).toBe("viewer");
    expect(full.publicUrl).toBe("https://ide.example.com");
    expect(() => loadConfig({ WORLDLINE_HOME: "/tmp/x", WORLDLINE_OIDC_ISSUER: "https://id.example.com" })).toThrow(
      /WORLDLINE_OIDC_CLIENT_ID/,
    );
    expect(() => loadConfig({ WORLDLINE_HOME: "/tmp/x", WORLDLINE_OIDC_DEFAULT_ROLE: "owner" })).toThrow(
      /WORLDLINE_OIDC_DEFAULT_ROLE/,
    );
  });
});
