import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TerminalInfo } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { connectedSocket, emitCommand, uniqueId, waitFor } from "../helpers";
import { PtyViewer } from "../pty/pty-client";
import { CHILD_TOKEN, startChildBridge, type ChildBridge } from "../reliability/child-bridge";
import { LocalHost } from "../../../server/host";
import { addSecretNames } from "../../../server/secrets";

/**
 * What a terminal reaches of the bridge's secrets (SECURITY.md, "What a terminal reaches"): its own
 * environment, and the bridge's start-up environment through /proc/$PPID/environ. The bridge runs
 * in its own process, started as `worldline serve` starts it, with secrets in its environment.
 */

const SECRETS: Record<string, string> = {
  FAKE_SERVICE_TOKEN: "service-token-value-0123456789",
  WORLDLINE_TOKENS: "ci:named-token-value-0123456789",
  UPSTREAM_API_KEY: "upstream-key-value-0123456789",
  DEPLOY_SECRET: "deploy-secret-value-0123456789",
  // Named by WORLDLINE_SCRUB_ENV only: nothing in its name says secret.
  CUSTOMER_DSN: "customer-dsn-value-0123456789",
};

let fake: FakeLlm;
let bridge: ChildBridge;
let workspace: string;
let socket: Socket;

beforeAll(async () => {
  fake = await startFakeLlm();
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-env-home-"));
  workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-env-ws-")));
  bridge = await startChildBridge({
    home,
    llmUrl: fake.url,
    env: { ...SECRETS, WORLDLINE_SCRUB_ENV: "CUSTOMER_DSN" },
  });
  socket = await connectedSocket(bridge.url, { token: CHILD_TOKEN });
}, 90_000);
afterAll(async () => {
  socket?.disconnect();
  bridge?.child.kill("SIGTERM");
  await bridge?.exited;
  await fake?.close();
});

/** `name=value` lines of an environment dump; the empty entries of a wiped block are dropped. */
function parseEnvironment(text: string): Map<string, string> {
  return new Map(
    text
      .split(/\0|\n/)
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

describe("a terminal's environment", () => {
  it("holds none of the bridge's secrets, and neither does its parent's start-up environment", async () => {
    const created = await bridge.api("/api/v1/sessions", { body: { workspace } });
    expect(created.status).toBe(201);
    const sessionId = ((await created.json()) as { id: string }).id;
    const terminal = await emitCommand<TerminalInfo>(socket, "pty.create", {
      commandId: uniqueId(),
      sessionId,
      cols: 100,
      rows: 30,
    });
    const viewer = new PtyViewer(socket, sessionId, terminal.terminalId, { xterm: false });
    await viewer.attach();
    viewer.input(
      "cat /proc/$PPID/environ > parent.env; env > own.env; ps -o ppid= -p $$ > ppid.txt 2>/dev/null || echo $PPID > ppid.txt\r",
    );
    await waitFor(
      async () => (await fs.readFile(path.join(workspace, "ppid.txt"), "utf8").catch(() => "")).trim() || null,
      30_000,
      "the terminal's files",
    );
    viewer.dispose();

    // The environment read is the bridge's own (the terminal's parent), not some wrapper's.
    expect(Number((await fs.readFile(path.join(workspace, "ppid.txt"), "utf8")).trim())).toBe(bridge.child.pid);
    const parent = await fs.readFile(path.join(workspace, "parent.env"), "utf8");
    const own = parseEnvironment(await fs.readFile(path.join(workspace, "own.env"), "utf8"));
    expect(parent.length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries({ ...SECRETS, WORLDLINE_TOKEN: CHILD_TOKEN })) {
      expect(parent, `${name} in /proc/$PPID/environ`).not.toContain(value);
      expect(own.has(name), `${name} in the terminal's environment`).toBe(false);
    }
    expect(parseEnvironment(parent).get("OPENAI_API_KEY") ?? "").toBe("");
    // What is not a secret stays: the terminal still has a usable environment.
    expect(own.get("PATH")).toBeTruthy();
    expect(parseEnvironment(parent).get("WORLDLINE_HOME")).toBeTruthy();
  });
});

const PROBES = ["WL_PROBE_TOKEN", "WL_PROBE_API_KEY", "DATABASE_URL", "REDIS_URL", "WL_PROBE_CONFIGURED"];

/** Runs `dump` (which returns an environment dump of a child of this process) with secrets in this process's environment. */
async function withProbes(dump: () => Promise<string>): Promise<Map<string, string>> {
  addSecretNames(["WL_PROBE_CONFIGURED"]);
  const saved = Object.fromEntries(PROBES.map((name) => [name, process.env[name]]));
  for (const name of PROBES) process.env[name] = `value-of-${name}`;
  process.env.WL_PROBE_PLAIN = "plain-value";
  try {
    return parseEnvironment(await dump());
  } finally {
    for (const name of PROBES)
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    delete process.env.WL_PROBE_PLAIN;
  }
}

describe("a shell tool's environment", () => {
  it("is scrubbed the same way: names that say secret, connection URLs and the configured list", async () => {
    const seen = await withProbes(async () => {
      let output = "";
      const run = await new LocalHost({ ripgrep: null }).exec({
        command: "env",
        cwd: workspace,
        env: {},
        onOutput: (chunk) => (output += chunk),
      });
      await run.finish();
      return output;
    });
    for (const name of PROBES) expect(seen.has(name), name).toBe(false);
    expect(seen.get("WL_PROBE_PLAIN")).toBe("plain-value");
  });
});

describe("an external agent's and an MCP server's environment", () => {
  it("is scrubbed too: an external agent inherits everything else, an MCP server only the basic names", async () => {
    const dump = (inherit: "all" | "basic") => async () => {
      let output = "";
      const exited = new Promise<void>((resolve) => {
        void new LocalHost({ ripgrep: null }).spawnStdio({
          command: "env",
          args: [],
          cwd: workspace,
          env: { GIVEN_BY_CONFIG: "given" },
          inherit,
          onStdout: (chunk) => (output += chunk),
          onStderr: () => undefined,
          onExit: () => resolve(),
        });
      });
      await exited;
      return output;
    };
    const agent = await withProbes(dump("all"));
    for (const name of PROBES) expect(agent.has(name), name).toBe(false);
    expect(agent.get("WL_PROBE_PLAIN")).toBe("plain-value");
    expect(agent.get("GIVEN_BY_CONFIG")).toBe("given");
    const mcp = await withProbes(dump("basic"));
    for (const name of [...PROBES, "WL_PROBE_PLAIN"]) expect(mcp.has(name), name).toBe(false);
    expect(mcp.get("GIVEN_BY_CONFIG")).toBe("given");
  });
});
