/**
 * ACP start-up benchmark: what an editor that spawns `worldline acp` waits for.
 * Spawn → `initialize` → `session/new` → `session/prompt` → the first `agent_message_chunk`,
 * on the scripted fake LLM (in its own process, as a real provider is). Median of RUNS,
 * each with a fresh data dir. Also the CPU time the ACP process spent up to that chunk
 * (from /proc, immune to other jobs on the machine), and the same flow against a bare Node ACP
 * agent (bench/lib/acp-baseline-agent.mjs), run in turn with it so drift weighs on both alike:
 * `acp_first_reply_ratio` is ours over the baseline's. Run with `npx tsx bench/acp.ts`.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { ROOT, stopChild } from "./lib/bridge-child.ts";
import { isMain, printJsonLine } from "./lib/cli.ts";
import { startFakeLlmProcess } from "./lib/fake-llm-child.ts";
import { processCpuMs } from "./lib/proc.ts";
import { median, round } from "./lib/stats.ts";

const RUNS = 5;
const REPLY_TIMEOUT_MS = 60_000;

export interface AcpBenchResult {
  runs: number;
  acp_first_reply_ms: number;
  acp_node_baseline_ms: number;
  acp_first_reply_ratio: number;
  acp_initialize_ms: number;
  acp_session_new_ms: number;
  acp_first_reply_cpu_ms: number;
}

export async function run(): Promise<AcpBenchResult> {
  const fake = await startFakeLlmProcess();
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-acp-ws-")));
  const samples: { initialize: number; sessionNew: number; reply: number; cpu: number; baseline: number }[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const baseline = (await once(fake, workspace, BASELINE_AGENT)).reply;
      samples.push({ ...(await once(fake, workspace, WORLDLINE_ACP)), baseline });
    }
  } finally {
    await fake.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
  return {
    runs: samples.length,
    acp_first_reply_ms: Math.round(median(samples.map((s) => s.reply))),
    acp_node_baseline_ms: Math.round(median(samples.map((s) => s.baseline))),
    acp_first_reply_ratio: round(median(samples.map((s) => s.reply / s.baseline))),
    acp_initialize_ms: Math.round(median(samples.map((s) => s.initialize))),
    acp_session_new_ms: Math.round(median(samples.map((s) => s.sessionNew))),
    acp_first_reply_cpu_ms: round(median(samples.map((s) => s.cpu)), 1),
  };
}

const WORLDLINE_ACP = [path.join(ROOT, "bin/worldline.mjs"), "acp"];
const BASELINE_AGENT = [path.join(ROOT, "bench/lib/acp-baseline-agent.mjs")];

async function once(
  fake: Awaited<ReturnType<typeof startFakeLlmProcess>>,
  workspace: string,
  agent: string[],
): Promise<{ initialize: number; sessionNew: number; reply: number; cpu: number }> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-bench-acp-home-"));
  await fake.script({ text: "Hello from the fake model." });
  const start = performance.now();
  const child = spawn(process.execPath, agent, {
    cwd: workspace,
    env: {
      ...process.env,
      PORT: "",
      WORLDLINE_TOKEN: "",
      WORLDLINE_HOME: home,
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "bench",
      WORLDLINE_MODEL: "fake-model",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  let firstChunk: (() => void) | undefined;
  const replied = new Promise<void>((resolve) => (firstChunk = resolve));
  const connection = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk") firstChunk?.();
    })
    .connect(
      acp.ndJsonStream(
        Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
      ),
    );
  const timeout = setTimeout(() => child.kill("SIGKILL"), REPLY_TIMEOUT_MS);
  try {
    await connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    });
    const initialize = performance.now() - start;
    const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, {
      cwd: workspace,
      mcpServers: [],
    });
    const sessionNew = performance.now() - start;
    const prompt = connection.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "Say hello." }],
    });
    await Promise.race([
      replied,
      prompt.then(() => {
        throw new Error("the prompt ended without a message chunk");
      }),
    ]);
    const reply = performance.now() - start;
    const cpu = child.pid ? processCpuMs(child.pid) : NaN;
    await prompt;
    return { initialize, sessionNew, reply, cpu };
  } catch (error) {
    throw new Error(`worldline acp: ${(error as Error).message}; its stderr ended with:\n${stderr}`);
  } finally {
    clearTimeout(timeout);
    child.stdin.end();
    await stopChild(child, 5_000);
    fs.rmSync(home, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  const result = await run();
  console.log(`worldline acp, spawn → first reply chunk (median of ${result.runs}):`);
  console.log(
    `  initialize ${result.acp_initialize_ms} ms, session/new ${result.acp_session_new_ms} ms, first chunk ${result.acp_first_reply_ms} ms (CPU ${result.acp_first_reply_cpu_ms} ms); a bare Node agent ${result.acp_node_baseline_ms} ms (${result.acp_first_reply_ratio}×)`,
  );
  printJsonLine(result);
}
