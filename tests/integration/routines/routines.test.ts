import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RoutineRunView } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { queryTestDb } from "../../db";
import { startTestBridge, waitFor, type TestBridge } from "../helpers";

/*
 * Routines on a real bridge and the fake model: the fire route and its token,
 * schedules, one run at a time with one queued, a folder that is gone, and two bridges sharing
 * one store that each schedule the same routine (exactly one fires each slot).
 */

let fake: FakeLlm;
let bridge: TestBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startTestBridge({ llmUrl: fake.url });
});
afterEach(() => fake.reset());
afterAll(async () => {
  await bridge.stop();
  await fake.close();
});

async function json<T>(b: TestBridge, pathname: string, init?: { method?: string; body?: unknown }): Promise<T> {
  const response = await b.api(pathname, init);
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function createRoutine(b: TestBridge, body: Record<string, unknown>): Promise<{ id: string; token: string }> {
  return json(b, "/api/v1/routines", {
    body: { name: "nightly", prompt: "Check the build.", isolation: "none", workspace: b.workspace, ...body },
  });
}

function fire(b: TestBridge, id: string, token: string, body?: string, headers: Record<string, string> = {}) {
  return fetch(`${b.url}/api/v1/routines/${id}/fire`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body,
  });
}

async function runsOf(b: TestBridge, id: string): Promise<RoutineRunView[]> {
  return json<RoutineRunView[]>(b, `/api/v1/routines/${id}/runs`);
}

describe("routines", () => {
  it("refuses a schedule that does not parse, has seven fields, and a budget that is negative or not a number, storing nothing", async () => {
    for (const bad of [
      { schedule: "every day" },
      { schedule: "* * * * * * *" },
      { schedule: "61 * * * *" },
      { budget_usd: -1 },
      { budget_usd: "ten" },
      { workspace: "" },
    ]) {
      const response = await bridge.api("/api/v1/routines", {
        body: { name: "bad", prompt: "x", workspace: bridge.workspace, ...bad },
      });
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toMatch(/:invalid|:bad_request/);
    }
    expect(await json<unknown[]>(bridge, "/api/v1/routines")).toEqual([]);
  });

  it("fires with its own token: a new session whose prompt ends with the body's JSON; the run ends with its outcome and cost", async () => {
    await json(bridge, "/api/v1/settings/prices", {
      method: "PUT",
      body: { prices: { "fake-model": { input: 1, cached_input: 0.1, output: 2 } } },
    });
    fake.script({ text: "All green.", usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const routine = await createRoutine(bridge, {});
    expect(routine.token).toMatch(/^wlr_/);
    const response = await fire(
      bridge,
      routine.id,
      routine.token,
      JSON.stringify({ ref: "refs/heads/main", sha: "abc123" }),
    );
    expect(response.status).toBe(202);
    const fired = (await response.json()) as { run_id: string; session_id: string };
    expect(fired.session_id).toBeTruthy();
    const run = await waitFor(async () =>
      (await runsOf(bridge, routine.id)).find((r) => r.id === fired.run_id && r.outcome),
    );
    expect(run).toMatchObject({ trigger: "fire", outcome: "completed", session_id: fired.session_id });
    expect(run.cost_usd).toBeCloseTo(0.002, 6);
    const prompt = JSON.stringify(fake.requests.at(-1)?.body.messages);
    expect(prompt).toContain("Check the build.");
    expect(prompt).toContain("refs/heads/main");
    const session = await json<{ title: string }>(bridge, `/api/v1/sessions/${fired.session_id}`);
    expect(session.title).toContain("nightly");
  });

  it("a wrong token, another routine's token, the token on any other route, a body over 1 MB and bad JSON are refused and start nothing", async () => {
    const a = await createRoutine(bridge, { name: "a" });
    const b = await createRoutine(bridge, { name: "b" });
    expect((await fire(bridge, a.id, "wlr_not-a-token")).status).toBe(401);
    expect((await fire(bridge, a.id, b.token)).status).toBe(401);
    const elsewhere = await fetch(`${bridge.url}/api/v1/sessions`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(elsewhere.status).toBe(401);
    const runs = await fetch(`${bridge.url}/api/v1/routines/${a.id}/runs`, {
      headers: { authorization: `Bearer ${a.token}` },
    });
    expect(runs.status).toBe(401);
    expect((await fire(bridge, a.id, a.token, JSON.stringify({ big: "x".repeat(1_100_000) }))).status).toBe(413);
    expect((await fire(bridge, a.id, a.token, "{not json")).status).toBe(400);
    // Deleting a routine revokes its token.
    await json(bridge, `/api/v1/routines/${b.id}`, { method: "DELETE" });
    expect((await fire(bridge, b.id, b.token)).status).toBe(401);
    expect(await runsOf(bridge, a.id)).toEqual([]);
  });

  it("a fire while a run runs queues one run, once; it starts when the first ends and the two never overlap", async () => {
    fake.script({ text: "slow", delayMs: 150, chunkSize: 1 }, { text: "second" });
    const routine = await createRoutine(bridge, { name: "queue" });
    const first = (await (await fire(bridge, routine.id, routine.token)).json()) as {
      run_id: string;
      session_id: string;
    };
    const second = (await (await fire(bridge, routine.id, routine.token)).json()) as { run_id: string; queued?: true };
    const third = (await (await fire(bridge, routine.id, routine.token)).json()) as { run_id: string; queued?: true };
    expect(first.session_id).toBeTruthy();
    expect(second).toMatchObject({ queued: true });
    expect(third).toEqual(second);
    const runs = await waitFor(async () => {
      const all = await runsOf(bridge, routine.id);
      return all.length === 2 && all.every((r) => r.outcome) ? all : undefined;
    });
    const [later, earlier] = runs;
    expect(earlier.id).toBe(first.run_id);
    expect(later.id).toBe(second.run_id);
    expect(later.session_id).not.toBe(earlier.session_id);
    expect(Date.parse(later.started_at)).toBeGreaterThanOrEqual(Date.parse(earlier.ended_at as string));
  });

  it("a routine whose folder is gone records a failed run with the reason, and is not retried", async () => {
    const folder = await fs.mkdtemp(path.join(bridge.home, "gone-"));
    const routine = await createRoutine(bridge, { name: "gone", workspace: folder });
    await fs.rm(folder, { recursive: true });
    const response = await fire(bridge, routine.id, routine.token);
    expect(response.status).toBe(202);
    const runs = await runsOf(bridge, routine.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ outcome: "failed", session_id: null });
    expect(runs[0].error).toMatch(/not|exist|found/i);
  });

  it("a six-field schedule fires within a second of its time; PATCH schedule null stops it", async () => {
    const routine = await createRoutine(bridge, { name: "every-2s", schedule: "*/2 * * * * *" });
    const run = await waitFor(async () => (await runsOf(bridge, routine.id)).at(-1), 10_000);
    expect(run.trigger).toBe("schedule");
    const [slot] = await queryTestDb<{ slotKey: string }>(
      bridge.home,
      `SELECT "slotKey" FROM "RoutineRun" WHERE "id" = '${run.id}'`,
    );
    const scheduled = Date.parse(slot.slotKey.split("@")[1]);
    expect(new Date(scheduled).getUTCSeconds() % 2).toBe(0);
    expect(Date.parse(run.started_at) - scheduled).toBeLessThan(1_000);
    await json(bridge, `/api/v1/routines/${routine.id}`, { method: "PATCH", body: { schedule: null } });
    const count = (await runsOf(bridge, routine.id)).length;
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // two slots that must not fire
    expect((await runsOf(bridge, routine.id)).length).toBe(count);
  });
});

describe("routines on two bridges sharing one store", () => {
  it("each scheduled slot is fired by exactly one bridge, with no slot missed", async () => {
    const second = await startTestBridge({ llmUrl: fake.url, home: bridge.home });
    try {
      const routine = await createRoutine(bridge, { name: "shared", schedule: "*/2 * * * * *" });
      // The second bridge learns of the routine from the store within its sync interval.
      await new Promise((resolve) => setTimeout(resolve, 11_000)); // five or six slots
      await json(bridge, `/api/v1/routines/${routine.id}`, { method: "PATCH", body: { schedule: null } });
      const rows = await queryTestDb<{ slotKey: string }>(
        bridge.home,
        `SELECT "slotKey" FROM "RoutineRun" WHERE "routineId" = '${routine.id}' ORDER BY "slotKey"`,
      );
      const slots = rows.map((row) => Date.parse(row.slotKey.split("@")[1]));
      expect(slots.length).toBeGreaterThanOrEqual(5);
      expect(new Set(slots).size).toBe(slots.length);
      for (let i = 1; i < slots.length; i++) expect(slots[i] - slots[i - 1]).toBe(2_000);
    } finally {
      await second.stop();
    }
  }, 30_000);
});
