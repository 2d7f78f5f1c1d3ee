import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApprovalView, MyBudgetView, UserView } from "../../../server/protocol";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { readSse, startTestBridge, waitFor, type TestBridge } from "../helpers";

/*
 * A person's daily budget on a hub: an admin sets it over /api/v1/users/:name, the person reads
 * their own (with today's spend) at /api/v1/me/budget, and the budget guard holds their sessions'
 * steps to it: past it, the turn waits on a `budget` request naming the person's budget.
 */

let fake: FakeLlm;
let hub: TestBridge;
let annToken: string;
let benToken: string;

beforeAll(async () => {
  fake = await startFakeLlm();
  hub = await startTestBridge({ llmUrl: fake.url });
  await fs.writeFile(path.join(hub.workspace, "a.txt"), "alpha\n");
  const prices = await hub.api("/api/v1/settings/prices", {
    method: "PUT",
    body: { prices: { "fake-model": { input: 1, cached_input: 0.1, output: 2 } } },
  });
  expect(prices.ok).toBe(true);
  const people = hub.services.people;
  const ann = await people.addUser({ name: "ann", role: "member" });
  const ben = await people.addUser({ name: "ben", role: "member" });
  annToken = (await people.createApiToken(ann.user.id, { name: "test" })).token;
  benToken = (await people.createApiToken(ben.user.id, { name: "test" })).token;
});
afterAll(async () => {
  await hub.stop();
  await fake.close();
});
afterEach(() => fake.reset());

/** A request as a person's API token, or as the launch token (the hub's operator, an admin) without one. */
function as(token: string | null, pathname: string, init: { method?: string; body?: unknown } = {}) {
  return hub.api(pathname, { ...init, headers: token ? { authorization: `Bearer ${token}` } : {} });
}

async function json<T>(response: Promise<Response>): Promise<T> {
  const answer = await response;
  if (!answer.ok) throw new Error(`${answer.url}: ${answer.status} ${await answer.text()}`);
  return (await answer.json()) as T;
}

async function userNamed(name: string): Promise<UserView> {
  const users = await json<UserView[]>(as(null, "/api/v1/users"));
  return users.find((user) => user.name === name)!;
}

describe("a person's daily budget", () => {
  it("an admin sets it, bad values get 400 and change nothing, and a member may not set it", async () => {
    expect((await userNamed("ann")).budget_usd).toBeNull();
    for (const budget of [-1, "2", "NaN", { usd: 1 }, 2e6]) {
      const response = await as(null, "/api/v1/users/ann", { method: "PATCH", body: { budget_usd: budget } });
      expect(response.status).toBe(400);
    }
    expect((await userNamed("ann")).budget_usd).toBeNull();

    const refused = await as(benToken, "/api/v1/users/ann", { method: "PATCH", body: { budget_usd: 5 } });
    expect(refused.status).toBe(403);
    expect((await userNamed("ann")).budget_usd).toBeNull();

    const set = await json<UserView>(as(null, "/api/v1/users/ben", { method: "PATCH", body: { budget_usd: 2.5 } }));
    expect(set.budget_usd).toBe(2.5);
    expect(await json<MyBudgetView>(as(benToken, "/api/v1/me/budget"))).toEqual({
      budget_usd: 2.5,
      limit_usd: 2.5,
      spent_usd: null,
    });
    const cleared = await json<UserView>(
      as(null, "/api/v1/users/ben", { method: "PATCH", body: { budget_usd: null } }),
    );
    expect(cleared.budget_usd).toBeNull();
    expect((await json<MyBudgetView>(as(benToken, "/api/v1/me/budget"))).budget_usd).toBeNull();
  });

  it("the launch token belongs to no one and has no budget of its own to read", async () => {
    expect((await as(null, "/api/v1/me/budget")).status).toBe(400);
  });

  it("holds the person's sessions to it: the step past it waits on a budget request, and allow raises today's limit", async () => {
    await json(as(null, "/api/v1/users/ann", { method: "PATCH", body: { budget_usd: 0.001 } }));
    const { id: sessionId } = await json<{ id: string }>(
      as(annToken, "/api/v1/sessions", { body: { workspace: hub.workspace, yolo: true } }),
    );
    // $0.0012 at the prices above: past ann's $0.001 for today.
    fake.script(
      {
        toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }],
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
      },
      { text: "alpha it is.", usage: { prompt_tokens: 10, completion_tokens: 5 } },
    );
    const stream = as(annToken, "/api/v1/chat/stream", { body: { message: "Read a.txt", session_id: sessionId } });
    const request = await waitFor(async () =>
      (await json<ApprovalView[]>(as(annToken, "/api/v1/approvals?status=pending"))).find(
        (a) => a.session_id === sessionId && a.tool === "budget",
      ),
    );
    expect(request.args).toMatchObject({ budget: "person", limit_usd: 0.001, raise_by_usd: 0.001 });
    expect(request.description).toMatch(/^Your budget for today is reached: \$0\.0012 of \$0\.0010/);
    expect(fake.requests).toHaveLength(1); // the second step did not start

    const decided = await as(annToken, `/api/v1/approvals/${request.approval_id}`, {
      body: { decision: "allow_once" },
    });
    expect(decided.status).toBe(200);
    await readSse(await stream);
    const session = await waitFor(async () => {
      const s = await json<{ running_task_id: string | null; stop_reason: string | null }>(
        as(annToken, `/api/v1/sessions/${sessionId}`),
      );
      return s.running_task_id === null && s.stop_reason ? s : undefined;
    });
    expect(session.stop_reason).toBe("completed");
    expect(fake.requests).toHaveLength(2);
    const today = await json<MyBudgetView>(as(annToken, "/api/v1/me/budget"));
    expect(today.budget_usd).toBe(0.001);
    expect(today.limit_usd).toBeCloseTo(0.002, 9);
    expect(today.spent_usd).toBeCloseTo(0.0012 + 0.00002, 9);
    // The allow raised today's limit, not the budget an admin set.
    expect((await userNamed("ann")).budget_usd).toBe(0.001);
  });
});
