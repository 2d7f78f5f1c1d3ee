import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../server/config";

describe("loadConfig", () => {
  it("defaults to loopback:4477 and ~/.worldline", () => {
    const config = loadConfig({ HOME: "/home/someone" });
    expect(config.port).toBe(4477);
    expect(config.host).toBe("127.0.0.1");
    expect(config.home.endsWith(".worldline")).toBe(true);
    expect(config.model).toBeNull();
  });

  it("names every invalid variable", () => {
    expect(() => loadConfig({ PORT: "eighty", OPENAI_BASE_URL: "not a url" })).toThrow(
      /PORT.*OPENAI_BASE_URL|OPENAI_BASE_URL.*PORT/,
    );
    expect(() => loadConfig({ WORLDLINE_TOKEN: "short" })).toThrow(/WORLDLINE_TOKEN/);
  });

  it("refuses a non-loopback HOST without the explicit LAN flag", () => {
    expect(() => loadConfig({ HOST: "0.0.0.0" })).toThrow(/WORLDLINE_ALLOW_LAN/);
    expect(loadConfig({ HOST: "0.0.0.0", WORLDLINE_ALLOW_LAN: "1" }).allowLan).toBe(true);
  });

  it("builds the model config from the OpenAI variables", () => {
    const config = loadConfig({ WORLDLINE_MODEL: "m", OPENAI_BASE_URL: "http://127.0.0.1:1/v1", OPENAI_API_KEY: "k" });
    expect(config.model).toEqual({ model: "m", baseURL: "http://127.0.0.1:1/v1", apiKey: "k" });
  });

  it("asks an Azure OpenAI endpoint for its API version, and names a bad proxy variable", () => {
    const azure = { WORLDLINE_MODEL: "gpt-4o", OPENAI_BASE_URL: "https://res.openai.azure.com" };
    expect(() => loadConfig(azure)).toThrow(/OPENAI_API_VERSION/);
    expect(loadConfig({ ...azure, OPENAI_API_VERSION: "2024-10-21" }).model?.apiVersion).toBe("2024-10-21");
    expect(() => loadConfig({ ...azure, OPENAI_API_VERSION: "latest" })).toThrow(/OPENAI_API_VERSION must be/);
    // Azure's v1 API is OpenAI's own: no API version.
    expect(loadConfig({ ...azure, OPENAI_BASE_URL: "https://res.openai.azure.com/openai/v1" }).model?.apiVersion).toBe(
      undefined,
    );
    expect(() => loadConfig({ HTTPS_PROXY: "ftp://proxy:21" })).toThrow(/HTTPS_PROXY: must be an http/);
  });

  it("takes hub roots apart from WORLDLINE_HOME only, and the names to scrub", () => {
    const home = "/srv/hub/.worldline";
    expect(loadConfig({ WORLDLINE_HOME: home }).hubRoots).toEqual([]);
    expect(loadConfig({ WORLDLINE_HOME: home, WORLDLINE_HUB_ROOTS: "/srv/projects:/srv/shared" }).hubRoots).toEqual([
      "/srv/projects",
      "/srv/shared",
    ]);
    for (const roots of ["/srv/hub", "/", home, `${home}/forks`])
      expect(() => loadConfig({ WORLDLINE_HOME: home, WORLDLINE_HUB_ROOTS: roots })).toThrow(/WORLDLINE_HUB_ROOTS/);
    expect(() => loadConfig({ WORLDLINE_HUB_ROOTS: "relative/dir" })).toThrow(/WORLDLINE_HUB_ROOTS/);
    expect(loadConfig({ WORLDLINE_SCRUB_ENV: "CUSTOMER_DSN, OTHER" }).scrubEnv).toEqual(["CUSTOMER_DSN", "OTHER"]);
    expect(() => loadConfig({ WORLDLINE_SCRUB_ENV: "not a name" })).toThrow(/WORLDLINE_SCRUB_ENV/);
  });
});
