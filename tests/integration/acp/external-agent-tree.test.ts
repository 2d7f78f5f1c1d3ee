import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventEnvelope } from "../../../server/protocol";
import { externalAgentSession, startTestBridge, waitFor, type TestBridge } from "../helpers";

/**
 * An external agent that runs commands (its own, in a group of its own, and one through Worldline's
 * terminal/create), ignores SIGTERM and keeps going after its connection closes, as `opencode acp`
 * did: deleting its session, releasing it when idle and stopping the bridge each leave no process of
 * its tree. Processes are counted from /proc by the marker each test gives the agent, right when the
 * delete (or release, or stop) returns: the kill path waits for them to be gone, SIGKILL after the grace.
 */
const BUSY_AGENT = path.join(import.meta.dirname, "fixtures/busy-agent.mjs");

let bridge: TestBridge;

beforeAll(async () => {
  bridge = await startTestBridge();
});
afterAll(() => bridge?.stop());

let lastMarker = 4000 + Math.floor(Math.random() * 4000);
const nextMarker = () => String(++lastMarker);

/** Running processes whose command line carries the marker (the agent, its shells, its sleeps). */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await fs.readFile(`/proc/${name}/stat`, "utf8");
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3))) continue;
      const argv = (await fs.readFile(`/proc/${name}/cmdline`, "utf8")).split("\0");
      if (argv.some((arg) => arg === marker || arg.includes(`sleep ${marker}`))) found.push(Number(name));
    } catch {
      // The process exited while we looked: it is not running.
    }
  }
  return found;
}

async function busySession(marker: string): Promise<string> {
  const agentCommand = `${JSON.stringify(process.execPath)} ${JSON.stringify(BUSY_AGENT)} ${marker}`;
  return externalAgentSession(bridge, agentCommand);
}

async function eventsOf(sessionId: string): Promise<EventEnvelope[]> {
  return bridge.services.log.read(sessionId, 0);
}

/**
 * Waits for the agent's whole tree: the agent, two shells and four sleeps (the shells' own `sleep &` and
 * `sleep`, for its command and for the terminal's).
 */
async function treeRunning(marker: string): Promise<number[]> {
  return waitFor(
    async () => {
      const pids = await processesWith(marker);
      return pids.length >= 7 ? pids : undefined;
    },
    20_000,
    `the agent's commands (marker ${marker})`,
  );
}

describe("an external agent's process tree", () => {
  it("is gone within the grace when its session is deleted mid-command", async () => {
    const marker = nextMarker();
    const sessionId = await busySession(marker);
    const { done } = await bridge.services.runtime.prompt(sessionId, `run ${marker}`);
    await waitFor(
      async () => (await eventsOf(sessionId)).some((e) => e.type === "tool.call"),
      20_000,
      "the agent's command to start",
    );
    const before = await treeRunning(marker);
    const started = Date.now();
    const response = await bridge.api(`/api/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(response.ok).toBe(true);
    const elapsed = Date.now() - started;
    expect((await done).outcome).toBe("cancelled");
    const after = await processesWith(marker);
    console.info(
      `[external-agent-tree] delete mid-command: ${before.length} processes before, ${after.length} after, ${elapsed} ms`,
    );
    expect(after).toEqual([]);
    expect(bridge.services.externalAgents?.size).toBe(0);
  });

  it("is gone within the grace when its session is deleted with a prompt queued behind the command", async () => {
    const marker = nextMarker();
    const sessionId = await busySession(marker);
    const first = await bridge.services.runtime.prompt(sessionId, `run ${marker}`);
    const queued = await bridge.services.runtime.prompt(sessionId, `run ${marker}`);
    expect(queued.queued).toBe(true);
    const before = await treeRunning(marker);
    const response = await bridge.api(`/api/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(response.ok).toBe(true);
    const after = await processesWith(marker);
    console.info(`[external-agent-tree] delete with a queued prompt: ${before.length} before, ${after.length} after`);
    expect(after).toEqual([]);
    expect((await first.done).outcome).toBe("cancelled");
    expect((await queued.done).outcome).toBe("cancelled");
    // The queued prompt started no agent of its own.
    expect(await processesWith(marker)).toEqual([]);
    expect(bridge.services.externalAgents?.size).toBe(0);
  });

  it("is stopped with its tree when it does not answer a cancel, and the next turn starts a fresh one", async () => {
    const marker = nextMarker();
    const sessionId = await busySession(marker);
    const { done } = await bridge.services.runtime.prompt(sessionId, `stuck ${marker}`);
    const before = await treeRunning(marker);
    await bridge.services.runtime.cancel(sessionId);
    expect((await done).outcome).toBe("cancelled");
    const after = await processesWith(marker);
    console.info(`[external-agent-tree] unanswered cancel: ${before.length} processes before, ${after.length} after`);
    expect(after).toEqual([]);
    const next = await bridge.services.runtime.prompt(sessionId, `background ${marker}`);
    expect((await next.done).outcome).toBe("completed");
    await bridge.api(`/api/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(await processesWith(marker)).toEqual([]);
  });

  it("is gone when an idle session is released, commands left running after the turn included", async () => {
    const marker = nextMarker();
    const sessionId = await busySession(marker);
    const { done } = await bridge.services.runtime.prompt(sessionId, `background ${marker}`);
    expect((await done).outcome).toBe("completed");
    const before = await treeRunning(marker);
    await bridge.services.janitor.forget(sessionId, "idle");
    const after = await processesWith(marker);
    console.info(`[external-agent-tree] idle release: ${before.length} processes before, ${after.length} after`);
    expect(after).toEqual([]);
  });

  it("records the agent's usage in full: input with the cache reads, output with the reasoning, and the cost", async () => {
    const marker = nextMarker();
    const sessionId = await busySession(marker);
    const { done } = await bridge.services.runtime.prompt(sessionId, `background ${marker}`);
    const result = await done;
    // The agent reported input 2543, cache reads 1000 and thought 12 apart from output 20 (its total says so).
    expect(result.stats).toMatchObject({
      input_tokens: 3543,
      cached_input_tokens: 1000,
      output_tokens: 32,
      reasoning_tokens: 12,
    });
    // gpt-4.1 at the default prices: $2 / M input, $0.5 / M cached, $8 / M output.
    const cost = (2543 * 2 + 1000 * 0.5 + 32 * 8) / 1_000_000;
    expect(result.stats.cost_usd).toBeCloseTo(cost, 9);
    await bridge.services.log.flush();
    const summary = (await (await bridge.api(`/api/v1/sessions/${sessionId}`)).json()) as {
      usage: { input_tokens: number; cached_input_tokens: number | null; output_tokens: number; cost_usd: number };
    };
    console.info(`[external-agent-tree] session usage: ${JSON.stringify(summary.usage)}`);
    expect(summary.usage).toMatchObject({ input_tokens: 3543, cached_input_tokens: 1000, output_tokens: 32 });
    expect(summary.usage.cost_usd).toBeCloseTo(cost, 6);
    await bridge.api(`/api/v1/sessions/${sessionId}`, { method: "DELETE" });
    expect(await processesWith(marker)).toEqual([]);
  });

  it("is gone when the bridge stops", async () => {
    const own = await startTestBridge();
    const marker = nextMarker();
    const agentCommand = `${JSON.stringify(process.execPath)} ${JSON.stringify(BUSY_AGENT)} ${marker}`;
    const created = await own.api("/api/v1/sessions", { body: { workspace: own.workspace, agentCommand } });
    const { id } = (await created.json()) as { id: string };
    void own.services.runtime.prompt(id, `run ${marker}`);
    const before = await treeRunning(marker);
    await own.stop();
    const after = await processesWith(marker);
    console.info(`[external-agent-tree] bridge stop: ${before.length} processes before, ${after.length} after`);
    expect(after).toEqual([]);
  });

  it("is gone when the bridge stops while it ignores the cancel, without waiting for its answer", async () => {
    const own = await startTestBridge();
    const markers = [nextMarker(), nextMarker()];
    for (const marker of markers) {
      const agentCommand = `${JSON.stringify(process.execPath)} ${JSON.stringify(BUSY_AGENT)} ${marker}`;
      const id = await externalAgentSession(own, agentCommand);
      void own.services.runtime.prompt(id, `stuck ${marker}`);
    }
    for (const marker of markers) await treeRunning(marker);
    const started = Date.now();
    await own.stop();
    const elapsed = Date.now() - started;
    const after = (await Promise.all(markers.map(processesWith))).flat();
    console.info(
      `[external-agent-tree] bridge stop, two agents ignoring the cancel: ${after.length} after, ${elapsed} ms`,
    );
    expect(after).toEqual([]);
    // The kill grace (2 s) and the rest of the shutdown; not the 5 s an unanswered cancel waits, once per agent.
    expect(elapsed).toBeLessThan(5_000);
  });
});
