import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { startAgentBridge, type AgentBridge } from "../agent/harness";

/**
 * Per-session state is freed: 1,000 sessions are created, prompted and deleted, and the
 * bridge's heap, its per-session maps and its child processes stay bounded. One in
 * SCRIPTED_EVERY sessions runs an external ACP agent process (a scripted one).
 */
const SESSIONS = Number(process.env.CHURN_SESSIONS ?? 1000);
const SCRIPTED_EVERY = 50;
const WARM_UP = 50;
/** Heap growth allowed over the whole run, after a full GC: a leak of a few KB per session passes 1,000 x. */
const MAX_HEAP_GROWTH_MB = 24;

const SCRIPTED_AGENT = path.join(import.meta.dirname, "../acp/fixtures/scripted-agent.mjs");
const AGENT_COMMAND = `${JSON.stringify(process.execPath)} ${JSON.stringify(SCRIPTED_AGENT)}`;

let fake: FakeLlm;
let bridge: AgentBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startAgentBridge(fake.url);
});
afterAll(async () => {
  await bridge?.close();
  await fake?.close();
});

const gc: () => void = (() => {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
})();

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

/** Live child processes of this process (zombies excluded). */
function children(): number {
  let count = 0;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === process.pid && fields[0] !== "Z") count += 1;
    } catch {
      // The process ended while being read.
    }
  }
  return count;
}

async function churn(index: number): Promise<void> {
  const external = index % SCRIPTED_EVERY === 0;
  const body = { workspace: bridge.workspace, yolo: true, ...(external ? { agentCommand: AGENT_COMMAND } : {}) };
  const created = await bridge.api("/api/v1/sessions", body);
  const { id } = (await created.json()) as { id: string };
  if (!external) fake.script({ text: `answer ${index}` });
  await bridge.chat(id, `prompt ${index}`);
  const deleted = await fetch(`${bridge.url}/api/v1/sessions/${id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${bridge.token}` },
  });
  expect(deleted.status).toBe(200);
}

describe("session churn", () => {
  it(`creates, prompts and deletes ${SESSIONS} sessions with bounded heap, state and child processes`, async () => {
    for (let i = 1; i <= WARM_UP; i++) await churn(i);
    const heapBefore = heapMb();
    const childrenBefore = children();
    const started = Date.now();
    for (let i = WARM_UP + 1; i <= SESSIONS; i++) await churn(i);
    const heapAfter = heapMb();
    const childrenAfter = children();
    const held = bridge.services.runtime.heldSessions();
    console.info(
      `[reliability/churn] ${SESSIONS} sessions in ${Math.round((Date.now() - started) / 1000)}s; ` +
        `heap MB after ${WARM_UP}: ${heapBefore.toFixed(1)}, after ${SESSIONS}: ${heapAfter.toFixed(1)}; ` +
        `child processes: ${childrenBefore} → ${childrenAfter}; runtime holds ${JSON.stringify(held)}; ` +
        `checkpoints hold ${bridge.services.checkpoints.heldSessions()}; ` +
        `external agents ${bridge.services.externalAgents?.size}`,
    );
    expect(held).toEqual({ states: 0, contexts: 0, layers: 0, lastUsed: 0 });
    expect(bridge.services.checkpoints.heldSessions()).toBe(0);
    expect(bridge.services.externalAgents?.size).toBe(0);
    expect(childrenAfter).toBeLessThanOrEqual(childrenBefore);
    expect(heapAfter - heapBefore).toBeLessThan(MAX_HEAP_GROWTH_MB);
  }, 1_800_000);
});
