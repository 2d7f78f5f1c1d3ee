/**
 * Agent loop benchmark: the median time the loop adds to one step over
 * a direct streaming call to the fake LLM, over 100 steps. The loop runs in a
 * real bridge (SQLite history, checkpoint rows, event log) with an instant tool;
 * the baseline replays exactly the requests the loop sent, straight through the
 * same OpenAI adapter, back to back. Run with `npx tsx bench/loop.ts`; the last
 * line printed is one JSON object. `run()` returns the same numbers.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import * as z from "zod";
import { AgentRuntime, createOpenAIProvider, type ChatRequest } from "../server/agent/index.ts";
import { loadConfig } from "../server/config/index.ts";
import { WorkspaceHosts } from "../server/host/index.ts";
import { startBridge, thisMachine } from "../server/main.ts";
import { EventLog, Sessions } from "../server/sessions/index.ts";
import * as store from "../server/store/index.ts";
import { defineTool } from "../server/tools/index.ts";
import { startFakeLlm } from "../tests/fake-llm/server.ts";
import { median, round } from "./lib/stats.ts";

/** Steps measured, from the issue. */
const STEPS = 100;

export interface LoopBenchResult {
  steps: number;
  loop_step_median_ms: number;
  direct_call_median_ms: number;
  /** The loop alone: history, checkpoint rows, events, tool dispatch. */
  loop_step_overhead_ms: number;
  /** The bridge as wired, workspace snapshots at every step included. */
  bridge_step_overhead_ms: number;
}

export async function run(): Promise<LoopBenchResult> {
  const fake = await startFakeLlm();
  const home = mkdtempSync(join(tmpdir(), "wl-bench-home-"));
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "wl-bench-ws-")));
  const noop = defineTool({
    name: "noop",
    description: "Does nothing.",
    parameters: z.object({ n: z.number().describe("A counter") }),
    needsApproval: () => ({ level: "none", subject: "noop", scope: "noop", description: "noop", risk: "none" }),
    execute: async ({ n }) => `ok ${n}`,
  });
  const env = {
    PORT: "0",
    WORLDLINE_HOME: home,
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: "x",
    WORLDLINE_MODEL: "fake-model",
  } as unknown as NodeJS.ProcessEnv;
  const config = loadConfig(env);
  const arrivals: number[] = [];
  fake.onRequest = () => {
    arrivals.push(performance.now());
    return undefined;
  };
  const script = () => {
    // Distinct arguments each step, so the loop guard stays quiet.
    for (let n = 1; n < STEPS; n++) fake.script({ toolCalls: [{ name: "noop", arguments: { n } }] });
    fake.script({ text: "done" });
  };
  const { db } = await store.openDb(home);
  const log = new EventLog(db);
  const sessions = new Sessions(db, log);
  try {
    // The loop alone: a runtime on the real store, checkpoints as bare rows.
    const runtime = new AgentRuntime({
      db,
      log,
      sessions,
      config,
      tools: () => [noop],
      hosts: new WorkspaceHosts(thisMachine(home).host),
      gate: { check: async () => ({ approved: true }) },
      maxSteps: STEPS + 1,
    });
    const loopSteps = await timeTurn(runtime, await sessions.create({ workspace, yolo: true }), script, arrivals);
    const bodies = fake.requests.map(
      (request) => request.body as { model: string; messages: ChatRequest["messages"]; tools?: ChatRequest["tools"] },
    );

    // The same requests, the same responses, no loop in between.
    fake.reset();
    arrivals.length = 0;
    script();
    const provider = createOpenAIProvider(config.model!);
    for (const body of bodies) {
      const signal = new AbortController().signal;
      for await (const _chunk of provider.stream({
        model: body.model,
        messages: body.messages,
        tools: body.tools,
        signal,
      })) {
        // drained: the loop reads every chunk too
      }
    }
    const directSteps = intervals(arrivals);

    // The whole bridge as wired (workspace snapshots by server/checkpoints at every step).
    fake.reset();
    arrivals.length = 0;
    await log.close();
    await db.$disconnect();
    const bridge = await startBridge({ config, ui: false, tools: () => [noop], agent: { maxSteps: STEPS + 1 } });
    let bridgeSteps: number[];
    try {
      bridgeSteps = await timeTurn(
        bridge.services.runtime,
        await bridge.services.sessions.create({ workspace, yolo: true }),
        script,
        arrivals,
      );
    } finally {
      await bridge.close();
    }
    const direct = median(directSteps);
    const loop = median(loopSteps);
    return {
      steps: loopSteps.length,
      loop_step_median_ms: round(loop),
      direct_call_median_ms: round(direct),
      loop_step_overhead_ms: round(loop - direct),
      bridge_step_overhead_ms: round(median(bridgeSteps) - direct),
    };
  } finally {
    await log.close().catch(() => undefined);
    await db.$disconnect().catch(() => undefined);
    await fake.close();
    rmSync(home, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

async function timeTurn(
  runtime: AgentRuntime,
  session: { id: string },
  script: () => void,
  arrivals: number[],
): Promise<number[]> {
  script();
  const started = await runtime.prompt(session.id, "run the bench");
  const result = await started.done;
  if (result.outcome !== "completed")
    throw new Error(`the bench turn ended with ${result.outcome}: ${result.message ?? ""}`);
  return intervals(arrivals);
}

/** Time from one request's arrival to the next: a whole step, model call included. */
function intervals(times: number[]): number[] {
  return times.slice(1).map((time, i) => time - times[i]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await run();
  console.log(
    `Agent loop: ${result.loop_step_median_ms} ms per step vs ${result.direct_call_median_ms} ms per direct call ` +
      `(median over ${result.steps} steps): ${result.loop_step_overhead_ms} ms overhead per step ` +
      `(${result.bridge_step_overhead_ms} ms in the full bridge, workspace snapshots included)`,
  );
  const { loop_step_overhead_ms, ...rest } = result;
  console.log(JSON.stringify({ ...rest, loop_step_overhead_ms }));
}
