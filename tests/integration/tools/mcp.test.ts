import { promises as fs } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localHost } from "../../../server/host";
import { createMcpManager, loadMcpConfig, mcpToolName, type McpManager } from "../../../server/tools";
import { waitFor } from "../../support/wait";
import { fakeCtx, makeWorkspace, write } from "../../unit/tools/support";
import { createTestMcpServer } from "./fixtures/mcp-test-server";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../../..");
const tsx = path.join(repoRoot, "node_modules/.bin/tsx");
const stdioServer = { command: tsx, args: [path.join(here, "fixtures/mcp-stdio-server.ts")] };

let env: Awaited<ReturnType<typeof makeWorkspace>>;
let manager: McpManager | undefined;
beforeEach(async () => {
  env = await makeWorkspace();
});
afterEach(async () => {
  await manager?.close();
  manager = undefined;
  await env.cleanup();
});

const byName = (m: McpManager, name: string) => m.tools().find((t) => t.name === name)!;

describe("MCP manager over stdio", () => {
  it("starts a server, wraps its tools with a server prefix and calls them", async () => {
    manager = createMcpManager({ host: localHost, servers: { tester: stdioServer }, cwd: env.ws });
    await manager.start();
    expect(manager.status()).toEqual([{ name: "tester", transport: "stdio", state: "ready", toolCount: 4 }]);
    expect(
      manager
        .tools()
        .map((t) => t.name)
        .sort(),
    ).toEqual(["tester__crash", "tester__echo", "tester__fail", "tester__slow"]);
    const echo = byName(manager, "tester__echo");
    expect(echo.jsonSchema).toMatchObject({ type: "object", properties: { text: { type: "string" } } });
    expect(echo.description).toContain('MCP server "tester"');
    expect(await echo.run({ text: "hi" }, fakeCtx(env.ws))).toEqual({ isError: false, output: "echo: hi" });
  });

  it("asks for approval on every MCP call", async () => {
    manager = createMcpManager({ host: localHost, servers: { tester: stdioServer } });
    await manager.start();
    expect(await byName(manager, "tester__echo").needsApproval({ text: "x" }, fakeCtx(env.ws))).toMatchObject({
      level: "ask",
      scope: "tester__echo",
    });
  });

  it("passes tool errors and invalid arguments back as error results", async () => {
    manager = createMcpManager({ host: localHost, servers: { tester: stdioServer } });
    await manager.start();
    expect(await byName(manager, "tester__fail").run({}, fakeCtx(env.ws))).toEqual({
      isError: true,
      output: "it failed on purpose",
    });
    expect((await byName(manager, "tester__echo").run({ text: 42 }, fakeCtx(env.ws))).isError).toBe(true);
    expect((await byName(manager, "tester__echo").run("[1,2]", fakeCtx(env.ws))).output).toMatch(
      /must be a JSON object/,
    );
  });

  it("times out a slow call", async () => {
    manager = createMcpManager({ host: localHost, servers: { tester: stdioServer }, callTimeoutMs: 300 });
    await manager.start();
    const result = await byName(manager, "tester__slow").run({}, fakeCtx(env.ws));
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/timed out/i);
  });

  it("reports a server command that exits at once, without throwing, and keeps the others", async () => {
    manager = createMcpManager({
      host: localHost,
      servers: {
        broken: { command: "bash", args: ["-c", "echo 'config missing: API_TOKEN' >&2; exit 1"] },
        absent: { command: "/nonexistent/mcp-server" },
        tester: stdioServer,
      },
    });
    await manager.start();
    const status = Object.fromEntries(manager.status().map((s) => [s.name, s]));
    expect(status.broken.state).toBe("failed");
    expect(status.broken.error).toMatch(/Could not start MCP server "broken"/);
    expect(status.broken.error).toContain("config missing: API_TOKEN");
    expect(status.absent.state).toBe("failed");
    expect(status.tester.state).toBe("ready");
    expect(manager.tools().every((t) => t.name.startsWith("tester__"))).toBe(true);
  });

  it("starts a stdio server in the workspace with the basic environment plus its own, not the bridge's secrets", async () => {
    process.env.WL_TEST_BRIDGE_SECRET = "sk-bridge-only";
    try {
      const report = 'echo "cwd=$PWD secret=${WL_TEST_BRIDGE_SECRET:-none} own=$OWN home=${HOME:+set}" >&2; exit 1';
      manager = createMcpManager({
        host: localHost,
        servers: { probe: { command: "bash", args: ["-c", report], env: { OWN: "mine" } } },
        cwd: env.ws,
      });
      await manager.start();
      const [status] = manager.status();
      expect(status.state).toBe("failed");
      expect(status.error).toContain(`cwd=${await fs.realpath(env.ws)} secret=none own=mine home=set`);
    } finally {
      delete process.env.WL_TEST_BRIDGE_SECRET;
    }
  });

  it("marks a server that crashes later as closed and answers calls with an error result", async () => {
    const updates: string[] = [];
    manager = createMcpManager({
      host: localHost,
      servers: { tester: stdioServer },
      onStatus: (list) => updates.push(list.map((s) => s.state).join()),
    });
    await manager.start();
    const echo = byName(manager, "tester__echo");
    await byName(manager, "tester__crash").run({}, fakeCtx(env.ws));
    await waitFor(() => manager!.status()[0].state === "closed");
    expect(updates).toEqual(["starting", "ready", "closed"]);
    expect(manager.tools()).toEqual([]);
    expect(await echo.run({ text: "x" }, fakeCtx(env.ws))).toMatchObject({
      isError: true,
      output: expect.stringMatching(/is not running/),
    });
  });
});

describe("MCP manager over streamable HTTP", () => {
  let server: http.Server;
  let url: string;
  beforeEach(async () => {
    // Stateless mode: a fresh server and transport per request, as the SDK's examples do.
    server = http.createServer(async (req, res) => {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const mcp = createTestMcpServer();
      res.on("close", () => {
        void transport.close();
        void mcp.close();
      });
      if (req.headers["x-test-key"] !== "k1") {
        res.statusCode = 401;
        res.end();
        return;
      }
      await mcp.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("connects with headers and calls a tool", async () => {
    manager = createMcpManager({ host: localHost, servers: { web: { url, headers: { "x-test-key": "k1" } } } });
    await manager.start();
    expect(manager.status()[0]).toMatchObject({ transport: "http", state: "ready" });
    expect(await byName(manager, "web__echo").run({ text: "over http" }, fakeCtx(env.ws))).toEqual({
      isError: false,
      output: "echo: over http",
    });
  });

  it("reports a server that refuses the connection", async () => {
    manager = createMcpManager({ host: localHost, servers: { web: { url } } });
    await manager.start();
    expect(manager.status()[0]).toMatchObject({ state: "failed" });
    expect(manager.status()[0].error).toMatch(/Could not start MCP server "web"/);
  });
});

describe("loadMcpConfig", () => {
  it("merges global and workspace files, the later one winning, and reports broken entries", async () => {
    const globalFile = path.join(env.root, "home/mcp.json");
    const workspaceFile = path.join(env.ws, ".worldline/mcp.json");
    await write(globalFile, JSON.stringify({ mcpServers: { a: { command: "x" }, shared: { command: "global" } } }));
    await write(
      workspaceFile,
      JSON.stringify({ mcpServers: { shared: { url: "http://127.0.0.1:1/mcp" }, bad: { nope: true } } }),
    );
    const loaded = await loadMcpConfig([globalFile, workspaceFile, path.join(env.root, "missing.json")]);
    expect(loaded.servers).toEqual({ a: { command: "x" }, shared: { url: "http://127.0.0.1:1/mcp" } });
    expect(loaded.errors).toEqual([
      `${workspaceFile}: server "bad" needs either "command" (stdio) or "url" (streamable HTTP)`,
    ]);
  });

  it("reports a file that is not JSON", async () => {
    const file = path.join(env.ws, "mcp.json");
    await fs.writeFile(file, "{ nope");
    expect((await loadMcpConfig([file])).errors[0]).toMatch(/not valid JSON/);
  });
});

describe("mcpToolName", () => {
  it("keeps names within what model APIs accept", () => {
    expect(mcpToolName("my server", "do.thing")).toBe("my_server__do_thing");
    expect(mcpToolName("s", "x".repeat(100))).toHaveLength(64);
  });
});
