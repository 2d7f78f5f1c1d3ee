import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OwnerLease, sweepOrphans } from "../../../server/leases";
import { EventLog } from "../../../server/sessions";
import * as store from "../../../server/store";
import { dropTestDatabases, testDatabaseUrl } from "../../db";

describe("leases: the sweep", () => {
  let db: store.Db;
  let home: string;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-leases-"));
    ({ db } = await store.openDb(home, testDatabaseUrl(home)));
  });

  afterAll(async () => {
    await db.$disconnect();
    await dropTestDatabases();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it("interrupts turns and requests of dead or unknown owners only, each once", async () => {
    const now = Date.now();
    // Another host's owners: one beating, one silent past the TTL (its pid means nothing here).
    await store.beatOwner(db, { id: "alive", kind: "web", host: "elsewhere", pid: 1 }, new Date(now));
    await store.beatOwner(db, { id: "dead", kind: "acp", host: "elsewhere", pid: 1 }, new Date(now - 60_000));
    // This host: a fresh heartbeat of a process that no longer exists is dead too.
    await store.beatOwner(db, { id: "killed", kind: "acp", host: os.hostname(), pid: 2 ** 22 + 1 }, new Date(now));
    const session = await store.createSession(db, { workspace: home });
    const turns = {
      alive: await store.createTurn(db, session.id, "a", "alive"),
      dead: await store.createTurn(db, session.id, "b", "dead"),
      killed: await store.createTurn(db, session.id, "c", "killed"),
      legacy: await store.createTurn(db, session.id, "d", null),
    };
    const request = (owner: keyof typeof turns) =>
      store.createApproval(db, {
        sessionId: session.id,
        turnId: turns[owner].id,
        toolCallId: `call_${owner}`,
        tool: "shell",
        args: "{}",
        description: owner,
        riskLevel: "medium",
        ownerId: turns[owner].ownerId,
      });
    const approvals = { alive: await request("alive"), dead: await request("dead") };

    const log = new EventLog(db);
    const leaseA = new OwnerLease(db, { kind: "web", ttlMs: 10_000, heartbeatMs: 60_000 });
    const leaseB = new OwnerLease(db, { kind: "web", ttlMs: 10_000, heartbeatMs: 60_000 });
    await leaseA.start();
    await leaseB.start();
    try {
      expect((await leaseA.liveOwners()).sort()).toEqual(["alive", leaseA.id, leaseB.id].sort());
      const interruptApprovals = async (live: string[]) => {
        for (const orphan of await store.orphanApprovals(db, live))
          await store.interruptOrphanApproval(db, orphan.id, orphan.ownerId, "test");
      };
      // No turn here waits with a run state (server/agent/take-over.ts).
      const keepWaiting = async () => new Set<string>();
      // Two processes sweep at once: each row is settled by one of them.
      await Promise.all([
        sweepOrphans({ db, log, lease: leaseA, interruptApprovals, keepWaiting }),
        sweepOrphans({ db, log, lease: leaseB, interruptApprovals, keepWaiting }),
      ]);
      const status = async (id: string) => (await store.getTurn(db, id))?.status;
      expect(await status(turns.alive.id)).toBe("running");
      expect(await status(turns.dead.id)).toBe("interrupted");
      expect(await status(turns.killed.id)).toBe("interrupted");
      expect(await status(turns.legacy.id)).toBe("interrupted");
      expect((await store.getApproval(db, approvals.alive.id))?.status).toBe("pending");
      expect((await store.getApproval(db, approvals.dead.id))?.status).toBe("interrupted");
      const events = await log.read(session.id, 0);
      const completed = events.filter((event) => event.type === "turn.completed").map((event) => event.payload);
      expect(completed).toHaveLength(3);
      expect(completed).toEqual(
        expect.arrayContaining(
          [turns.dead, turns.killed, turns.legacy].map((t) => expect.objectContaining({ turnId: t.id })),
        ),
      );
    } finally {
      await leaseA.stop();
      await leaseB.stop();
      await log.close();
    }
    // A clean stop removes the owner's row.
    expect((await store.freshOwners(db, new Date(0))).map((owner) => owner.id)).not.toContain(leaseA.id);
  });
});
