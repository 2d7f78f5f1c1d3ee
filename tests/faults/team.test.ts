import fs from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeLlm, type FakeLlm } from "../fake-llm/server";
import { SyncClient, comparable } from "../integration/sync/support";
import {
  FAST_LEASES,
  TOKEN,
  chat,
  events,
  expectConsistentLog,
  record,
  startBridge,
  tempDir,
  type FaultBridge,
} from "./bridges";
import { hold, waitFor } from "../support/wait";
import { startPostgres, startRedis, type PrivatePostgres, type PrivateRedis } from "./services";

/**
 * Team mode under faults, against this run's own PostgreSQL cluster and Redis (never
 * the machine's): two `worldline serve` processes A and B share them. Each test compares what was
 * streamed with the event log, the saved history and the checkpoints afterwards, and records the
 * time to recover.
 */
const OUTAGE_MS = Number(process.env.FAULTS_OUTAGE_MS ?? 20_000);
const ANSWER = "The quick brown fox jumps over the lazy dog; every character of this answer is kept.";

let postgres: PrivatePostgres;
let redis: PrivateRedis;
let fake: FakeLlm;
let db: pg.Client | null = null;
let workspace: string;
const bridges: FaultBridge[] = [];
let env: Record<string, string>;

async function bridge(name: string): Promise<FaultBridge> {
  const started = await startBridge({ name, home: await tempDir(`wl-faults-${name}-`), llmUrl: fake.url, env });
  bridges.push(started);
  return started;
}

async function query<T extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
  if (!db) {
    db = new pg.Client({ connectionString: postgres.url("worldline") });
    db.on("error", () => (db = null)); // the cluster is stopped on purpose; the next query reconnects
    await db.connect();
  }
  return (await db.query<T>(text, values)).rows;
}

async function closeQueries(): Promise<void> {
  const client = db;
  db = null;
  await client?.end().catch(() => undefined);
}

/** The saved history's positions, in order: gap-free from 0 means nothing was dropped. */
async function historyPositions(sessionId: string): Promise<number[]> {
  const rows = await query<{ position: number }>(
    `SELECT "position" FROM "HistoryEntry" WHERE "sessionId" = $1 ORDER BY "position"`,
    [sessionId],
  );
  return rows.map((row) => row.position);
}

async function assistantTexts(sessionId: string): Promise<string[]> {
  const rows = await query<{ data: string }>(
    `SELECT "data" FROM "HistoryEntry" WHERE "sessionId" = $1 AND "kind" = 'message' ORDER BY "position"`,
    [sessionId],
  );
  return rows
    .map((row) => JSON.parse(row.data) as { message: { role: string; content?: unknown } })
    .filter((record) => record.message.role === "assistant" && typeof record.message.content === "string")
    .map((record) => record.message.content as string);
}

/** The pending request of a session's turn, as `bridge` lists it. */
async function pendingOn(bridge: FaultBridge, sessionId: string) {
  return waitFor(
    async () =>
      (
        await bridge.json<{ approval_id: string; session_id: string; task_id: string }[]>(
          "/api/v1/approvals?status=pending",
        )
      ).find((approval) => approval.session_id === sessionId),
    30_000,
    "the pending approval",
  );
}

/** Waits until the turn's run state is stored: from then on a restart or a takeover keeps it waiting. */
async function resumable(turnId: string): Promise<void> {
  await waitFor(
    async () =>
      (await query<{ runState: string | null }>(`SELECT "runState" FROM "Turn" WHERE "id" = $1`, [turnId]))[0]
        ?.runState,
    30_000,
    "the turn's stored run state",
  );
}

/**
 * Which bridge (lease owner) runs a turn: its session's claim holder while the session is still at
 * the epoch the turn was claimed at (server/leases/README.md); null once the claim moved on or is free.
 */
async function turnOwner(turnId: string): Promise<string | null> {
  const [row] = await query<{ claimOwnerId: string | null; current: boolean }>(
    `SELECT s."claimOwnerId", s."epoch" = t."epoch" AS "current" FROM "Turn" t JOIN "Session" s ON s."id" = t."sessionId" WHERE t."id" = $1`,
    [turnId],
  );
  return row?.current ? row.claimOwnerId : null;
}

async function approvalStatus(approvalId: string): Promise<string | undefined> {
  const [row] = await query<{ status: string }>(`SELECT "status" FROM "Approval" WHERE "id" = $1`, [approvalId]);
  return row?.status;
}

/** The session's log once its one turn has ended, checked for consistency. */
async function endedOn(bridge: FaultBridge, sessionId: string) {
  let lastProblem = "";
  return waitFor(
    async () => {
      const checked = await expectConsistentLog(bridge, sessionId).catch((error: Error) => {
        lastProblem = error.message;
        return null;
      });
      return checked && checked.outcomes.size === 1 ? checked : null;
    },
    30_000,
    () => `the turn's end (${lastProblem || "no outcome yet"}); the log:\n${bridge.log().slice(-3000)}`,
  );
}

async function turnStatuses(sessionId: string): Promise<string[]> {
  const rows = await query<{ status: string }>(`SELECT "status" FROM "Turn" WHERE "sessionId" = $1 ORDER BY "number"`, [
    sessionId,
  ]);
  return rows.map((row) => row.status);
}

function gapFree(positions: number[]): boolean {
  return positions.every((position, index) => position === index);
}

async function newSession(on: FaultBridge, yolo = true): Promise<string> {
  const session = await on.json<{ id: string }>("/api/v1/sessions", { workspace, yolo });
  return session.id;
}

beforeAll(async () => {
  [postgres, redis, fake] = await Promise.all([startPostgres(), startRedis(), startFakeLlm()]);
  workspace = await tempDir("wl-faults-ws-");
  env = {
    DATABASE_URL: postgres.url("worldline"),
    REDIS_URL: redis.url,
    WORLDLINE_REDIS_PREFIX: `wl-faults-${process.pid}`,
    WORLDLINE_STORE_RETRY_MS: String(OUTAGE_MS * 3),
    ...FAST_LEASES,
  };
}, 120_000);

afterAll(async () => {
  await closeQueries();
  await Promise.all(bridges.map((b) => b.stop().catch(() => undefined)));
  await fake?.close();
  // Always, whatever failed above: this run's own services only.
  await redis?.destroy();
  await postgres?.destroy();
}, 120_000);

describe("faults in team mode (private PostgreSQL and Redis)", () => {
  let a: FaultBridge;
  let b: FaultBridge;

  // A test that failed leaves its unused scripted answers behind; the next starts clean.
  beforeEach(() => fake.reset());

  it("PostgreSQL stopped mid-turn for the outage, one bridge: the turn pauses, then keeps every character", async () => {
    a = await bridge("A");
    const sessionId = await newSession(a);
    fake.script({ text: ANSWER, chunkSize: 2, delayMs: 60 });
    const asked = fake.requests.length;
    const turn = chat(a, { message: "answer slowly", session_id: sessionId });
    await waitFor(() => fake.requests.length > asked, 20_000, "the model request");
    await hold(500, "into the stream: the outage starts mid-turn");
    await closeQueries();
    await postgres.stop("fast");
    const stopped = Date.now();
    // A request that needs the store meanwhile gets an honest 503 with the fault's code.
    const refused = await a.api("/api/v1/sessions", { body: { workspace } });
    const refusal = (await refused.json()) as { error?: { code?: string } };
    await hold(Math.max(0, OUTAGE_MS - (Date.now() - stopped)), "the outage itself");
    await postgres.start();
    const back = Date.now();
    const answered = await turn;
    expect([refused.status, refusal.error?.code]).toEqual([503, "store:unavailable"]);
    const recoveryMs = Date.now() - back;
    expect(answered.status).toBe(200);
    expect(answered.text).toBe(ANSWER);
    const done = answered.events.find((e) => e.event === "done");
    expect(done?.data.outcome).toBe("completed");
    const { log, outcomes } = await expectConsistentLog(a, sessionId);
    expect([...outcomes.values()]).toEqual(["completed"]);
    const notices = log.filter((e) => e.type === "notice").map((e) => String(e.payload.text));
    expect(notices.some((text) => /database unreachable, retrying/i.test(text))).toBe(true);
    expect(gapFree(await historyPositions(sessionId))).toBe(true);
    expect(await assistantTexts(sessionId)).toContain(ANSWER);
    expect(await turnStatuses(sessionId)).toEqual(["completed"]);
    // Once per state change: not one error block per retry.
    const outageLines = a
      .log()
      .split("\n")
      .filter((line) => /database unreachable/.test(line));
    expect(outageLines.length).toBeLessThanOrEqual(3);
    record("postgres down mid-turn, one bridge", {
      outageMs: OUTAGE_MS,
      recoveryMs,
      notices,
      outageLines: outageLines.length,
    });
  }, 180_000);

  it("PostgreSQL stopped mid-turn, two bridges: the peer does not sweep the running turn (no split brain)", async () => {
    b = await bridge("B");
    const sessionId = await newSession(a);
    fake.script({ text: ANSWER, chunkSize: 2, delayMs: 60 });
    const asked = fake.requests.length;
    const turn = chat(a, { message: "answer slowly", session_id: sessionId });
    await waitFor(() => fake.requests.length > asked, 20_000, "the model request");
    await hold(500, "into the stream: the outage starts mid-turn");
    await closeQueries();
    await postgres.stop("fast");
    await hold(OUTAGE_MS, "the outage itself");
    await postgres.start();
    const back = Date.now();
    const answered = await turn;
    const recoveryMs = Date.now() - back;
    expect(answered.text).toBe(ANSWER);
    // Past the leases' TTL after the outage, B had every chance to judge A dead; it must not have.
    await hold(Number(FAST_LEASES.WORLDLINE_LEASE_TTL_MS) * 2, "two lease TTLs in which B could wrongly judge A dead");
    const { outcomes } = await expectConsistentLog(b, sessionId);
    expect([...outcomes.values()]).toEqual(["completed"]);
    expect(await turnStatuses(sessionId)).toEqual(["completed"]);
    expect(gapFree(await historyPositions(sessionId))).toBe(true);
    expect(b.log()).not.toMatch(/was running; it was interrupted/);
    record("postgres down mid-turn, two bridges", { outageMs: OUTAGE_MS, recoveryMs, outcome: [...outcomes.values()] });
  }, 180_000);

  it("a session's turns alternating between bridges take unique, ordered checkpoint numbers", async () => {
    const sessionId = await newSession(a);
    const order = [a, b, a, b, a];
    for (const [index, on] of order.entries()) {
      fake.script({ text: `turn ${index}` });
      const answered = await chat(on, { message: `turn ${index} on ${on.name}`, session_id: sessionId });
      expect(answered.status).toBe(200);
    }
    const { log } = await expectConsistentLog(a, sessionId);
    const announced = log.filter((e) => e.type === "checkpoint.created").map((e) => Number(e.payload.number));
    const stored = (await a.json<{ number: number }[]>(`/api/v1/sessions/${sessionId}/checkpoints`)).map(
      (c) => c.number,
    );
    expect(announced.length).toBeGreaterThanOrEqual(order.length);
    expect(stored).toEqual(announced.slice().sort((x, y) => x - y));
    expect(new Set(stored).size).toBe(stored.length);
    expect(stored).toEqual(stored.map((_, index) => index));
    expect(gapFree(await historyPositions(sessionId))).toBe(true);
    record("alternating bridges", { checkpoints: stored });
  }, 120_000);

  it("one session's prompt sent to two bridges at the same instant: one turn at a time, both answered", async () => {
    const sessionId = await newSession(a);
    fake.script(
      { text: "first answer", chunkSize: 2, delayMs: 20 },
      { text: "second answer", chunkSize: 2, delayMs: 20 },
    );
    const [one, two] = await Promise.all([
      chat(a, { message: "to A", session_id: sessionId }),
      chat(b, { message: "to B", session_id: sessionId }),
    ]);
    expect([one.status, two.status], `${one.text} ${two.text}`).toEqual([200, 200]);
    expect([one.text, two.text].sort()).toEqual(["first answer", "second answer"]);
    const { log } = await expectConsistentLog(a, sessionId);
    let running: string | null = null;
    for (const event of log) {
      if (event.type === "turn.started") {
        expect(running, `turn ${String(event.payload.turnId)} started while ${running} ran`).toBeNull();
        running = event.payload.turnId as string;
      }
      if (event.type === "turn.completed") running = null;
    }
    expect(await turnStatuses(sessionId)).toEqual(["completed", "completed"]);
    record("same-instant prompts", { turns: log.filter((e) => e.type === "turn.started").length });
  }, 120_000);

  it("Redis restarted while a follower on the other bridge reads: the follower gets every event", async () => {
    const sessionId = await newSession(a);
    const follower = new SyncClient(b.url, sessionId, { token: TOKEN });
    try {
      await waitFor(() => follower.subscribes > 0, 10_000, "the follower's subscription");
      fake.script({ text: ANSWER, chunkSize: 2, delayMs: 40 });
      const asked = fake.requests.length;
      const turn = chat(a, { message: "answer slowly", session_id: sessionId });
      await waitFor(() => fake.requests.length > asked, 20_000, "the model request");
      await redis.stop();
      // While Redis is down, a prompt that must be forwarded is refused at once and honestly.
      const refusedAt = Date.now();
      const refused = await b.api("/api/v1/chat/stream", { body: { message: "now", session_id: sessionId } });
      const refusedMs = Date.now() - refusedAt;
      const refusal = (await refused.json()) as { error: { code: string } };
      await hold(3_000, "the Redis outage itself");
      await redis.start();
      const back = Date.now();
      await turn;
      const stored = await events(a, sessionId);
      await waitFor(() => follower.lastSeq >= stored[stored.length - 1].seq, 30_000, "the follower to catch up");
      const recoveryMs = Date.now() - back;
      expect(comparable(follower.applied)).toEqual(comparable(stored));
      expect(refused.status).toBe(503);
      expect(refusal.error.code).toBe("bus:unavailable");
      expect(refusedMs).toBeLessThan(2_000);
      expect(a.log() + b.log()).not.toMatch(/Unhandled error event/);
      await expectConsistentLog(a, sessionId);
      record("redis restart with a follower", { recoveryMs, refusedMs, refusal: refusal.error.code });
    } finally {
      follower.close();
    }
  }, 120_000);

  it("kill -9 of the owner with an approval pending: a decision in the gap is refused, then the other bridge takes the waiting turn over and deciding there finishes it", async () => {
    const sessionId = await newSession(a, false);
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "touch approved-after-takeover" } }] },
      { text: "done" },
    );
    void chat(a, { message: "make a file", session_id: sessionId }).catch(() => undefined); // its bridge dies
    const pending = await pendingOn(b, sessionId);
    await resumable(pending.task_id);
    const owner = await turnOwner(pending.task_id);
    expect(owner).not.toBeNull();
    a.child.kill("SIGKILL");
    await a.exited;
    const killed = Date.now();
    const decided = await b.api(`/api/v1/approvals/${pending.approval_id}`, { body: { decision: "allow_once" } });
    const answer = (await decided.json()) as { error?: { code: string; message: string } };
    expect(decided.status).toBe(409);
    expect(answer.error?.code).toBe("approval:owner_gone");
    // Nothing was decided for nobody: the request still waits, and nothing ran.
    expect(await approvalStatus(pending.approval_id)).toBe("pending");
    await expect(fs.stat(path.join(workspace, "approved-after-takeover"))).rejects.toThrow();

    // A's lease runs out: B takes the turn over (the request stays pending), and a decision there finishes it.
    await waitFor(async () => ![owner, null].includes(await turnOwner(pending.task_id)), 30_000, "the takeover");
    const recoveryMs = Date.now() - killed;
    expect(await approvalStatus(pending.approval_id)).toBe("pending");
    const allowed = await b.api(`/api/v1/approvals/${pending.approval_id}`, { body: { decision: "allow_once" } });
    expect(allowed.status).toBe(200);
    const { outcomes, log } = await endedOn(b, sessionId);
    expect([...outcomes.values()]).toEqual(["completed"]);
    expect(log.filter((e) => e.type === "approval.decided").map((e) => e.payload.status)).toEqual(["approved"]);
    expect(log.filter((e) => e.type === "turn.started")).toHaveLength(1);
    await fs.stat(path.join(workspace, "approved-after-takeover"));
    record("kill -9 with an approval pending", { refused: answer.error?.code, recoveryMs });
  }, 120_000);

  it("a bridge frozen with an approval pending across an outage: a decision in the liveness gap is refused, the other bridge takes the turn over, and the stale bridge writes nothing", async () => {
    const c = await bridge("C");
    const sessionId = await newSession(c, false);
    fake.script(
      { toolCalls: [{ name: "shell", arguments: { command: "touch allowed-after-takeover" } }] },
      { text: "done" },
    );
    const stale = chat(c, { message: "make a file", session_id: sessionId }).catch(() => undefined);
    const pending = await pendingOn(b, sessionId);
    await resumable(pending.task_id);
    // Frozen once what C announced is stored (a checkpoint row still in flight when a bridge freezes
    // and loses its session is not written by the bridge that takes the turn over).
    await waitFor(
      async () => {
        const rows = await b.json<{ id: string }[]>(`/api/v1/sessions/${sessionId}/checkpoints`);
        const stored = new Set(rows.map((row) => row.id));
        const announced = (await events(b, sessionId)).filter((e) => e.type === "checkpoint.created");
        return announced.every((e) => stored.has(e.payload.checkpointId as string)) || undefined;
      },
      30_000,
      "C's checkpoints stored",
    );
    const owner = await turnOwner(pending.task_id);
    expect(owner).not.toBeNull();
    // C stops answering (its process exists, its heartbeat ages), and the database goes away long
    // enough for B's own heartbeat to fail: back, B may judge no one dead for a TTL.
    c.child.kill("SIGSTOP");
    const backAgain = () => b.log().split("lease heartbeat written again").length;
    const before = backAgain();
    await closeQueries();
    await postgres.stop("fast");
    await hold(Number(FAST_LEASES.WORLDLINE_HEARTBEAT_MS) * 3, "the outage: long enough for B's heartbeat to fail");
    await postgres.start();
    await waitFor(() => backAgain() > before, 30_000, "B's first heartbeat after the outage");
    const decided = await b.api(`/api/v1/approvals/${pending.approval_id}`, { body: { decision: "allow_once" } });
    const answer = (await decided.json()) as { error?: { code: string; message: string } };
    expect(decided.status, JSON.stringify(answer)).toBe(503);
    expect(answer.error?.code).toBe("approval:unavailable");
    expect(Number(decided.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Once B judges again, C (silent past the TTL) is dead to it: B takes its waiting turn over.
    const gapEnded = Date.now();
    await waitFor(
      async () => ![owner, null].includes(await turnOwner(pending.task_id).catch(() => owner)),
      30_000,
      () => `the takeover of C's turn; B's log:\n${b.log().slice(-3000)}`,
    );
    const settledMs = Date.now() - gapEnded;
    expect(await approvalStatus(pending.approval_id)).toBe("pending");
    // C wakes up: its turn lost the session; it writes nothing, runs nothing, and the request still waits.
    const logBefore = await events(b, sessionId);
    c.child.kill("SIGCONT");
    await waitFor(() => /no longer holds session/.test(c.log()), 30_000, "C to notice it lost the session");
    await stale;
    // What the log gained meanwhile is B's resumed turn saying it runs, if anything: nothing of C's.
    const gained = (await events(b, sessionId)).slice(logBefore.length);
    expect(
      gained.map((e) => `${e.type}:${String(e.payload.status)}`).filter((e) => e !== "session.updated:running"),
    ).toEqual([]);
    expect(await approvalStatus(pending.approval_id)).toBe("pending");
    await expect(fs.stat(path.join(workspace, "allowed-after-takeover"))).rejects.toThrow();

    // Allowed on B: the turn B took over finishes there, once.
    const allowed = await b.api(`/api/v1/approvals/${pending.approval_id}`, { body: { decision: "allow_once" } });
    expect(allowed.status).toBe(200);
    const { log, outcomes } = await endedOn(b, sessionId);
    expect([...outcomes.values()]).toEqual(["completed"]);
    expect(log.filter((e) => e.type === "approval.decided").map((e) => e.payload.status)).toEqual(["approved"]);
    expect(c.log().match(/no longer holds session/g)).toHaveLength(1);
    await fs.stat(path.join(workspace, "allowed-after-takeover"));
    record("decision in the liveness gap, then a stale bridge", {
      refused: answer.error?.code,
      retryAfter: decided.headers.get("retry-after"),
      settledMs,
    });
  }, 120_000);
});
