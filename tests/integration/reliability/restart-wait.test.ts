import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../../fake-llm/server";
import { queryTestDb } from "../../db";
import { waitFor } from "../../support/wait";
import { connectTo, startChildBridge, type ChildBridge } from "./child-bridge";

/**
 * A turn waiting on an approval outlives its bridge: `kill -9` while it waits, a new bridge on
 * the same WORLDLINE_HOME takes the turn over, the request is still pending, and allowing it
 * runs the call and finishes the same turn; the same for a budget request (allowing it raises the
 * budget, and the turn goes on). (SQLite; on PostgreSQL with WORLDLINE_TEST_POSTGRES.)
 */

interface WireEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
}
interface ApprovalWire {
  approval_id: string;
  task_id: string | null;
  status: string;
  tool: string;
}

const WAIT_MS = 30_000;
let fake: FakeLlm;
let home: string;
let workspace: string;
let bridge: ChildBridge | undefined;

beforeAll(async () => {
  fake = await startFakeLlm();
  home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-restart-home-"));
  workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), "wl-restart-ws-")));
});

afterAll(async () => {
  if (bridge && bridge.child.exitCode === null) {
    bridge.child.kill("SIGKILL");
    await bridge.exited;
  }
  await fake.close();
});

async function json<T>(response: Promise<Response>): Promise<T> {
  const res = await response;
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const events = (b: ChildBridge, sessionId: string) => json<WireEvent[]>(b.api(`/api/v1/sessions/${sessionId}/events`));
const pending = (b: ChildBridge) => json<ApprovalWire[]>(b.api("/api/v1/approvals?status=pending"));

const connect = connectTo;

function waitForBridge<T>(what: string, check: () => Promise<T>): Promise<NonNullable<T>> {
  return waitFor(check, WAIT_MS, () => `${what}\n${bridge?.stderr() ?? ""}`);
}

describe("a turn waiting on an approval across kill -9", () => {
  it("stays waiting on the new bridge, and allowing it finishes the same turn", async () => {
    bridge = await startChildBridge({ home, llmUrl: fake.url });
    const sessionId = (await json<{ id: string }>(bridge.api("/api/v1/sessions", { body: { workspace } }))).id;
    fake.script(
      { toolCalls: [{ name: "write_file", arguments: { path: "after-restart.txt", content: "written" } }] },
      { text: "Wrote it." },
    );
    const socket = await connect(bridge);
    const prompted = (await socket
      .timeout(10_000)
      .emitWithAck("turn.prompt", { commandId: "cmd-restart-1", sessionId, text: "write the file" })) as {
      ok: boolean;
    };
    expect(prompted.ok).toBe(true);
    const [asked] = await waitForBridge("a pending approval", async () => {
      const rows = await pending(bridge!);
      return rows.length ? rows : undefined;
    });
    // The run state is stored once the request is asked.
    await waitForBridge("the stored run state", async () => {
      const rows = await queryTestDb<{ runState: string | null }>(
        home,
        `SELECT "runState" FROM "Turn" WHERE "id" = '${asked.task_id}'`,
      );
      return rows[0]?.runState ?? undefined;
    });
    socket.disconnect();
    bridge.child.kill("SIGKILL");
    expect((await bridge.exited).signal).toBe("SIGKILL");

    bridge = await startChildBridge({ home, llmUrl: fake.url });
    // Still pending, the same request, its turn still running (not interrupted).
    expect((await pending(bridge)).map((row) => row.approval_id)).toEqual([asked.approval_id]);
    const [turn] = await queryTestDb<{ status: string }>(
      home,
      `SELECT "status" FROM "Turn" WHERE "id" = '${asked.task_id}'`,
    );
    expect(["running", "waiting"]).toContain(turn.status);
    const before = await events(bridge, sessionId);
    expect(before.some((event) => event.type === "turn.completed")).toBe(false);

    const allowed = await json<{ status: string }>(
      bridge.api(`/api/v1/approvals/${asked.approval_id}`, { body: { decision: "allow_once" } }),
    );
    expect(allowed.status).toBe("approved");
    const completed = await waitForBridge("the resumed turn's end", async () =>
      (await events(bridge!, sessionId)).find((event) => event.type === "turn.completed"),
    );
    expect(completed.payload).toMatchObject({ turnId: asked.task_id, outcome: "completed" });
    expect(await fs.readFile(path.join(workspace, "after-restart.txt"), "utf8")).toBe("written");
    // One turn, started once; the model saw the call's result in the same conversation.
    const all = await events(bridge, sessionId);
    expect(all.filter((event) => event.type === "turn.started")).toHaveLength(1);
    expect(all.map((event) => event.seq)).toEqual(all.map((_event, i) => i + 1));
    const last = fake.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    expect(last.messages.map((message) => message.role).slice(-3)).toEqual(["user", "assistant", "tool"]);
    const [row] = await queryTestDb<{ status: string; runState: string | null }>(
      home,
      `SELECT "status", "runState" FROM "Turn" WHERE "id" = '${asked.task_id}'`,
    );
    expect(row).toEqual({ status: "completed", runState: null });
  }, 180_000);

  it("a turn waiting on a budget request goes on after the restart once it is allowed", async () => {
    bridge ??= await startChildBridge({ home, llmUrl: fake.url });
    fake.reset();
    await json(
      bridge.api("/api/v1/settings/prices", {
        method: "PUT",
        body: { prices: { "fake-model": { input: 1, cached_input: 0.1, output: 2 } } },
      }),
    );
    const sessionId = (await json<{ id: string }>(bridge.api("/api/v1/sessions", { body: { workspace, yolo: true } })))
      .id;
    await json(bridge.api(`/api/v1/sessions/${sessionId}`, { method: "PATCH", body: { budget_usd: 0.001 } }));
    await fs.writeFile(path.join(workspace, "a.txt"), "alpha\n");
    // A step that costs $0.0012 at the prices above: past the $0.001 budget.
    fake.script(
      {
        toolCalls: [{ name: "read_file", arguments: { path: "a.txt" } }],
        usage: { prompt_tokens: 1000, completion_tokens: 100 },
      },
      { text: "Under budget again." },
    );
    const socket = await connect(bridge);
    const prompted = (await socket
      .timeout(10_000)
      .emitWithAck("turn.prompt", { commandId: "cmd-restart-2", sessionId, text: "read it" })) as { ok: boolean };
    expect(prompted.ok).toBe(true);
    const asked = await waitForBridge("a pending budget request", async () =>
      (await pending(bridge!)).find((row) => row.tool === "budget"),
    );
    await waitForBridge("the stored run state", async () => {
      const rows = await queryTestDb<{ runState: string | null }>(
        home,
        `SELECT "runState" FROM "Turn" WHERE "id" = '${asked.task_id}'`,
      );
      return rows[0]?.runState ?? undefined;
    });
    socket.disconnect();
    bridge.child.kill("SIGKILL");
    await bridge.exited;

    bridge = await startChildBridge({ home, llmUrl: fake.url });
    expect((await pending(bridge)).map((row) => row.approval_id)).toEqual([asked.approval_id]);
    await json(bridge.api(`/api/v1/approvals/${asked.approval_id}`, { body: { decision: "allow_once" } }));
    const completed = await waitForBridge("the resumed turn's end", async () =>
      (await events(bridge!, sessionId)).find((event) => event.type === "turn.completed"),
    );
    expect(completed.payload).toMatchObject({ turnId: asked.task_id, outcome: "completed" });
    const session = await json<{ budget_usd: number }>(bridge.api(`/api/v1/sessions/${sessionId}`));
    expect(session.budget_usd).toBeCloseTo(0.002, 9);
  }, 180_000);
});
