import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApprovalService } from "../../../server/approvals";
import { OwnerLease, type Liveness } from "../../../server/leases";
import { EventLog, Sessions } from "../../../server/sessions";
import * as store from "../../../server/store";
import { toWireError } from "../../../server/transport/errors";
import { dropTestDatabases, testDatabaseUrl } from "../../db";
import { waitFor } from "../../support/wait";

describe("leases: one owner's liveness, and approval decisions that follow it", () => {
  let db: store.Db;
  let home: string;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-liveness-"));
    ({ db } = await store.openDb(home, testDatabaseUrl(home)));
  });

  afterAll(async () => {
    await db.$disconnect();
    await dropTestDatabases();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it("is live on a fresh heartbeat, gone on a stale one or a vanished process on this host", async () => {
    const now = await store.databaseNow(db);
    await store.beatOwner(db, { id: "beating", kind: "web", host: "elsewhere", pid: 1 }, now);
    await store.beatOwner(
      db,
      { id: "silent", kind: "web", host: "elsewhere", pid: 1 },
      new Date(now.getTime() - 60_000),
    );
    await store.beatOwner(db, { id: "killed", kind: "web", host: os.hostname(), pid: 2 ** 22 + 1 }, now);
    const lease = new OwnerLease(db, { kind: "web", ttlMs: 10_000, heartbeatMs: 60_000 });
    await lease.start();
    try {
      const states = async (ids: string[]) => Promise.all(ids.map(async (id) => (await lease.liveness(id)).state));
      expect(await states([lease.id, "beating", "silent", "killed", "never-seen"])).toEqual([
        "live",
        "live",
        "gone",
        "gone",
        "gone",
      ]);
    } finally {
      await lease.stop();
    }
  });

  it("a task after the heartbeat that fails neither stops the tasks after it nor makes the heartbeat count as missed", async () => {
    const now = await store.databaseNow(db);
    await store.beatOwner(
      db,
      { id: "long-silent", kind: "web", host: "elsewhere", pid: 1 },
      new Date(now.getTime() - 60_000),
    );
    const lease = new OwnerLease(db, { kind: "web", ttlMs: 10_000, heartbeatMs: 30 });
    let sweeps = 0;
    let after = 0;
    lease.onBeat(async () => {
      sweeps += 1;
      throw new Error("the sweep failed");
    });
    lease.onBeat(async () => {
      after += 1;
    });
    await lease.start();
    try {
      await waitFor(() => sweeps >= 3 && after >= 3, 5_000, "three heartbeats with their tasks");
      // Still judging: an owner silent for a minute is gone, not "unknown" for a TTL after a "missed" beat.
      expect(await lease.liveness("long-silent")).toEqual({ state: "gone" });
      expect(await lease.liveOwners()).not.toContain("long-silent");
    } finally {
      await lease.stop();
    }
  });

  it("a decision for an owner whose liveness cannot be judged is refused with Retry-After and decides nothing", async () => {
    const session = await store.createSession(db, { workspace: home });
    const turn = await store.createTurn(db, session.id, "p");
    const request = (toolCallId: string) =>
      store.createApproval(db, {
        sessionId: session.id,
        turnId: turn.id,
        toolCallId,
        tool: "shell",
        args: "{}",
        description: "touch x",
        riskLevel: "medium",
        ownerId: "o-asker",
      });
    const log = new EventLog(db);
    // What server/leases answers while this bridge is back from an outage, then once it judges again.
    let asker: Liveness = { state: "unknown", retryAfterMs: 2_400 };
    const approvals = new ApprovalService({
      db,
      log,
      sessions: new Sessions(db, log),
      ownerId: "o-decider",
      liveness: async () => asker,
    });
    try {
      const first = await request("call_1");
      const refused: unknown = await approvals
        .decide(first.id, { decision: "allow_once", decidedBy: "http" })
        .catch((error: unknown) => error);
      expect(toWireError(refused)).toMatchObject({
        status: 503,
        retryAfter: 3,
        error: { code: "approval:unavailable" },
      });
      expect((await store.getApproval(db, first.id))?.status).toBe("pending");
      asker = { state: "gone" };
      await expect(approvals.decide(first.id, { decision: "allow_once", decidedBy: "http" })).rejects.toMatchObject({
        code: "approval:owner_gone",
      });
      asker = { state: "live" };
      const second = await request("call_2");
      const view = await approvals.decide(second.id, { decision: "allow_once", decidedBy: "http" });
      expect(view.status).toBe("approved");
      // Every accepted decision is in the log, written by the process that accepted it.
      const decided = (await log.read(session.id, 0)).filter((event) => event.type === "approval.decided");
      expect(decided.map((event) => event.payload)).toEqual([
        expect.objectContaining({ approvalId: second.id, status: "approved" }),
      ]);
    } finally {
      await log.close();
    }
  });
});
