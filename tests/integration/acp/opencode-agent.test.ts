import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope } from "../../../server/protocol";
import { startFakeLlm } from "../../fake-llm/server";
import type { FakeLlm } from "../../fake-llm/types";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";

/**
 * `opencode acp` itself, installed from the npm registry, as the external agent the issue was
 * found with: it runs a command through its own bash tool (the fake LLM asks it to) and catches
 * SIGTERM. Deleting the session mid-command leaves none of its processes; its usage is recorded
 * with the input tokens. Processes are counted from /proc by its binary's path and the command's
 * marker.
 */
const OPENCODE_VERSION = "1.18.33";
const INSTALL_DIR = path.join(os.tmpdir(), `worldline-test-opencode-${OPENCODE_VERSION}`);
const OPENCODE = path.join(INSTALL_DIR, "node_modules/.bin/opencode");
/** Installing (~350 MB of platform binaries) takes ~15 s here; a slow mirror gets more. */
const INSTALL_TIMEOUT_MS = 240_000;
const MARKER = String(5000 + Math.floor(Math.random() * 4000));

let bridge: TestBridge;
let fake: FakeLlm;
let home: string;

async function installOpencode(): Promise<void> {
  try {
    await fs.access(OPENCODE);
    return;
  } catch {
    // Not installed yet on this machine: install it below.
  }
  await fs.mkdir(INSTALL_DIR, { recursive: true });
  await promisify(execFile)(
    "npm",
    ["install", "--prefix", INSTALL_DIR, "--no-audit", "--no-fund", `opencode-ai@${OPENCODE_VERSION}`],
    { timeout: INSTALL_TIMEOUT_MS },
  );
}

beforeAll(async () => {
  await installOpencode();
  fake = await startFakeLlm({ strict: false });
  // opencode names the session with its own request: answered with a title, never with the script.
  fake.onRequest = (request) => {
    const messages = (request.body?.messages ?? []) as { role: string; content: unknown }[];
    const text = JSON.stringify(messages);
    if (text.includes("Generate a title")) return { text: "Sleeping" };
    if (text.includes("Say hi")) return { text: "Hi.", usage: { prompt_tokens: 2543, completion_tokens: 20 } };
    if (messages.some((m) => m.role === "tool"))
      return { text: "Done.", usage: { prompt_tokens: 2600, completion_tokens: 5 } };
    return {
      toolCalls: [{ name: "bash", arguments: { command: `sleep ${MARKER}`, description: "Wait a while" } }],
      usage: { prompt_tokens: 2543, completion_tokens: 20 },
    };
  };
  bridge = await startTestBridge();
  home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-opencode-home-"));
  const config = {
    model: "fake/fake-model",
    autoupdate: false,
    share: "disabled",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake",
        options: { baseURL: fake.url, apiKey: "test-key" },
        models: { "fake-model": { name: "Fake model" } },
      },
    },
    permission: { bash: "allow", edit: "allow" },
  };
  await fs.writeFile(path.join(bridge.workspace, "opencode.json"), JSON.stringify(config, null, 2));
}, INSTALL_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await bridge?.stop();
  await fake?.close();
});

/** opencode's own home, so nothing of the machine's user (config, auth, sessions) is read or written. */
function agentCommand(): string {
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local/share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local/state"),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
  };
  const assignments = Object.entries(env).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  return `env ${assignments.join(" ")} ${JSON.stringify(OPENCODE)} acp`;
}

/** Running processes of opencode (its binary) or of the command it was asked to run. */
async function opencodeProcesses(): Promise<number[]> {
  const found: number[] = [];
  for (const name of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await fs.readFile(`/proc/${name}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state === "Z" || state === "X") continue;
      const argv = (await fs.readFile(`/proc/${name}/cmdline`, "utf8")).split("\0").join(" ");
      const exe = await fs.readlink(`/proc/${name}/exe`).catch(() => "");
      if (argv.includes(`sleep ${MARKER}`) || exe.startsWith(INSTALL_DIR) || argv.includes(INSTALL_DIR))
        found.push(Number(name));
    } catch {
      // The process exited while we looked: it is not running.
    }
  }
  return found;
}

describe("opencode acp as a session's external agent", () => {
  it("has its usage recorded with the input tokens", async () => {
    const created = await bridge.api("/api/v1/sessions", {
      body: { workspace: bridge.workspace, agentCommand: agentCommand() },
    });
    const { id } = (await created.json()) as { id: string };
    const { done } = await bridge.services.runtime.prompt(id, "Say hi.");
    const result = await done;
    console.info(`[opencode-agent] usage: ${JSON.stringify(result.stats)}`);
    expect(result.outcome).toBe("completed");
    // The fake model reported 2543 prompt and 20 completion tokens; opencode passes them on.
    expect(result.stats.input_tokens).toBeGreaterThanOrEqual(2543);
    expect(result.stats.output_tokens).toBeGreaterThanOrEqual(20);
    await bridge.services.log.flush();
    const summary = (await (await bridge.api(`/api/v1/sessions/${id}`)).json()) as { usage: { input_tokens: number } };
    expect(summary.usage.input_tokens).toBe(result.stats.input_tokens);
    await bridge.api(`/api/v1/sessions/${id}`, { method: "DELETE" });
  }, 120_000);

  it("leaves no process of its tree when its session is deleted mid-command", async () => {
    const created = await bridge.api("/api/v1/sessions", {
      body: { workspace: bridge.workspace, agentCommand: agentCommand() },
    });
    expect(created.ok).toBe(true);
    const { id } = (await created.json()) as { id: string };
    const events = () => bridge.services.log.read(id, 0) as Promise<EventEnvelope[]>;
    const { done } = await bridge.services.runtime.prompt(id, "Wait a while, please.");
    const before = await waitFor(
      async () => {
        const pids = await opencodeProcesses();
        const argvs = await Promise.all(pids.map((pid) => fs.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")));
        const sleeping = argvs.some((argv) => argv.split("\0").join(" ").includes(`sleep ${MARKER}`));
        return sleeping ? pids : undefined;
      },
      90_000,
      "opencode to run the command",
    ).catch(async (error: unknown) => {
      const seen = (await events()).map((e) => `${e.type} ${JSON.stringify(e.payload).slice(0, 200)}`);
      console.error(`[opencode-agent] requests to the model: ${fake.requests.length}\n${seen.join("\n")}`);
      throw error;
    });
    expect((await events()).some((e) => e.type === "tool.call")).toBe(true);
    const started = Date.now();
    const deleted = await bridge.api(`/api/v1/sessions/${id}`, { method: "DELETE" });
    expect(deleted.ok).toBe(true);
    const elapsed = Date.now() - started;
    const result = await done;
    const after = await opencodeProcesses();
    console.info(
      `[opencode-agent] delete mid-command: ${before.length} processes before, ${after.length} after, ${elapsed} ms; turn ${result.outcome}, stats ${JSON.stringify(result.stats)}`,
    );
    expect(after).toEqual([]);
  }, 180_000);
});
