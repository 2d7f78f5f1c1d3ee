import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApprovalView } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { readSse, startTestBridge, waitFor, type TestBridge } from "../helpers";

/*
 * Budgets: a step past a session's budget waits on a `budget` request that only a
 * person decides; allow raises the budget by its size once and the same turn goes on, reject ends
 * it with stop_reason "budget". And turns that end on inactivity, never on a wall clock.
 */

let fake: FakeLlm;
let bridge: TestBridge;

beforeAll(async () => {
  fake = await startFakeLlm();
  bridge = await startTestBridge({ llmUrl: fake.url, env: { WORLDLINE_TURN_IDLE_MS: "1500" } });
  await fs.writeFile(path.join(bridge.workspace, "a.txt"), "alpha\n");
  const prices = await bridge.api("/api/v1/settings/prices", {
    method: "PUT",
    body: { prices: { "fake-model": { input: 1, cached_input: 0.1, output: 2 } } },
  });
  expect(prices.ok).toBe(true);
});
afterAll(async () => {
  await bridge.stop();
  await fake.close();
});
afterEach(() => fake.reset());

async function json<T>(pathname: string, init?: { method?: string; body?: unknown }): Promise<T> {
  const response = await bridge.api(pathname, init);
  if (!response.ok) throw new Error(`${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function sessionWithBudget(budget: number, yolo = true): Promise<string> {
  const { id } = await json<{ id: string }>("/api/v1/sessions", { body: { workspace: bridge.workspace, yolo } });
  await json(`/api/v1/sessions/${id}`, { method: "PATCH", body: { budget_usd: budget } });
  return id;
}

/** A step that costs $0.0012 at the prices above: past a $0.001 budget. */
const COSTLY_STEP = {
  toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }],
  usage: { prompt_tokens: 1000, completion_tokens: 100 },
};

async function budgetRequest(sessionId: string): Promise<ApprovalView> {
  return waitFor(async () =>
    (await json<ApprovalView[]>("/api/v1/approvals?status=pending")).find(
      (a) => a.session_id === sessionId && a.tool === "budget",
    ),
  );
}

describe("budgets", () => {
  it("a session budget of 0.001 USD pauses the turn after the step that crosses it; allow raises it by its size and resumes that very turn", async () => {
    const sessionId = await sessionWithBudget(0.001);
    fake.script(COSTLY_STEP, { text: "alpha it is.", usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const stream = bridge.api("/api/v1/chat/stream", { body: { message: "Read a.txt", session_id: sessionId } });
    const request = await budgetRequest(sessionId);
    expect(request.args).toMatchObject({ budget: "session", limit_usd: 0.001, raise_by_usd: 0.001 });
    expect((request.args as { spent_usd: number }).spent_usd).toBeCloseTo(0.0012, 6);
    expect(request.description).toMatch(/\$0\.0012 of \$0\.0010/);
    expect(fake.requests).toHaveLength(1); // the second step did not start
    const taskId = request.task_id;

    const decided = await bridge.api(`/api/v1/approvals/${request.approval_id}`, { body: { decision: "allow_once" } });
    expect(decided.status).toBe(200);
    const events = await readSse(await stream);
    expect(events.at(-1)?.event).toBeDefined();
    await waitFor(async () => {
      const session = await json<{ running_task_id: string | null; stop_reason: string | null }>(
        `/api/v1/sessions/${sessionId}`,
      );
      return session.running_task_id === null && session.stop_reason === "completed";
    });
    const session = await json<{ budget_usd: number }>(`/api/v1/sessions/${sessionId}`);
    expect(session.budget_usd).toBeCloseTo(0.002, 9);
    // Set, then raised: each told to the page and the board as it happens.
    const told = await json<{ type: string; payload: { budget_usd?: number } }[]>(
      `/api/v1/sessions/${sessionId}/events`,
    );
    expect(
      told.flatMap((e) =>
        e.type === "session.updated" && e.payload.budget_usd !== undefined ? [e.payload.budget_usd] : [],
      ),
    ).toEqual([0.001, 0.002]);
    expect(fake.requests).toHaveLength(2);
    // The same turn: one task from the prompt to the answer.
    const task = await json<{ type: string }[]>(`/api/v1/tasks/${taskId}/events`);
    expect(task.some((event) => event.type === "turn.completed")).toBe(true);
  });

  it("reject ends the turn with stop_reason budget, and yolo never decides a budget request", async () => {
    const sessionId = await sessionWithBudget(0.001, true);
    fake.script(COSTLY_STEP, { text: "never sent" });
    const stream = bridge.api("/api/v1/chat/stream", { body: { message: "Read a.txt", session_id: sessionId } });
    const request = await budgetRequest(sessionId);
    await bridge.api(`/api/v1/approvals/${request.approval_id}`, { body: { decision: "reject" } });
    await readSse(await stream);
    const session = await waitFor(async () => {
      const s = await json<{ running_task_id: string | null; stop_reason: string | null }>(
        `/api/v1/sessions/${sessionId}`,
      );
      return s.running_task_id === null && s.stop_reason ? s : undefined;
    });
    expect(session.stop_reason).toBe("budget");
    expect(fake.requests).toHaveLength(1);
  });

  it("a model with no known price counts tokens against the session's token budget, and says so", async () => {
    const { id: sessionId } = await json<{ id: string }>("/api/v1/sessions", {
      body: { workspace: bridge.workspace, yolo: true },
    });
    // No price is set for this model: its cost is unknown, so the token budget is what holds.
    await json(`/api/v1/sessions/${sessionId}`, {
      method: "PATCH",
      body: { model: "unpriced-model", budget_usd: 0.001, budget_tokens: 1000 },
    });
    fake.script(COSTLY_STEP, { text: "alpha it is.", usage: { prompt_tokens: 10, completion_tokens: 5 } });
    const stream = bridge.api("/api/v1/chat/stream", { body: { message: "Read a.txt", session_id: sessionId } });
    const request = await budgetRequest(sessionId);
    expect(request.args).toMatchObject({
      budget: "session_tokens",
      spent_tokens: 1100,
      limit_tokens: 1000,
      raise_by_tokens: 1000,
    });
    expect(request.description).toMatch(/1100 of 1000 tokens \(the model has no known price, so tokens are counted\)/);
    expect(fake.requests).toHaveLength(1);
    const decided = await bridge.api(`/api/v1/approvals/${request.approval_id}`, { body: { decision: "allow_once" } });
    expect(decided.status).toBe(200);
    await readSse(await stream);
    const session = await waitFor(async () => {
      const s = await json<{ running_task_id: string | null; stop_reason: string | null; budget_tokens: number }>(
        `/api/v1/sessions/${sessionId}`,
      );
      return s.running_task_id === null && s.stop_reason ? s : undefined;
    });
    expect(session.stop_reason).toBe("completed");
    expect(session.budget_tokens).toBe(2000);
    expect(fake.requests).toHaveLength(2);
  });

  it("refuses a negative budget and one that is not a number", async () => {
    const { id } = await json<{ id: string }>("/api/v1/sessions", { body: { workspace: bridge.workspace } });
    for (const budget of [-0.5, "1", "NaN", { usd: 1 }]) {
      const response = await bridge.api(`/api/v1/sessions/${id}`, { method: "PATCH", body: { budget_usd: budget } });
      expect(response.status).toBe(400);
    }
  });
});

describe("inactivity", () => {
  it("a turn with no model output and no running tool for WORLDLINE_TURN_IDLE_MS is interrupted with a notice", async () => {
    const { id } = await json<{ id: string }>("/api/v1/sessions", { body: { workspace: bridge.workspace } });
    fake.script({ text: "far too late", firstChunkDelayMs: 20_000 });
    const started = Date.now();
    const events = await readSse(
      await bridge.api("/api/v1/chat/stream", { body: { message: "hello", session_id: id } }),
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    const log = await json<{ type: string; payload: { text?: string; outcome?: string } }[]>(
      `/api/v1/sessions/${id}/events`,
    );
    expect(
      log.some((e) => e.type === "notice" && /no model output and no running tool/.test(e.payload.text ?? "")),
    ).toBe(true);
    expect(log.find((e) => e.type === "turn.completed")?.payload.outcome).toBe("interrupted");
    expect(events.length).toBeGreaterThan(0);
  });

  it("an active turn twice as long as the idle limit is not interrupted: a tool that runs counts as activity", async () => {
    const { id } = await json<{ id: string }>("/api/v1/sessions", {
      body: { workspace: bridge.workspace, yolo: true },
    });
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "sleep 3.2 && echo done" } }] },
      { text: "It printed done." },
    );
    await readSse(await bridge.api("/api/v1/chat/stream", { body: { message: "wait", session_id: id } }));
    const log = await json<{ type: string; payload: { outcome?: string } }[]>(`/api/v1/sessions/${id}/events`);
    expect(log.find((e) => e.type === "turn.completed")?.payload.outcome).toBe("completed");
    expect(fake.requests).toHaveLength(2);
  });
});
