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
    // A turn is its session's claim holder's while the session is still at the turn's epoch: one
    // session per holder, one with no claim (a row older than claims), and one whose claim moved on
    // to a live owner after its turn was claimed (the turn's owner was fenced).
    const claimed = async (holder: string | null, prompt: string) => {
      const session = await store.createSession(db, { workspace: home });
      const claim = holder ? (await store.claimSession(db, session.id, holder, [holder])).claim! : null;
      return store.createTurn(db, session.id, prompt, claim?.epoch ?? 0);
    };
    const turns = {
      alive: await claimed("alive", "a"),
      dead: await claimed("dead", "b"),
      killed: await claimed("killed", "c"),
      legacy: await claimed(null, "d"),
      movedOn: await claimed("dead", "e"),
    };
    const takenOver = await store.claimSession(db, turns.movedOn.sessionId, "alive", ["alive"]);
    expect(takenOver.claim?.epoch).toBe(turns.movedOn.epoch + 1);
    const request = (owner: "alive" | "dead") =>
      store.createApproval(db, {
        sessionId: turns[owner].sessionId,
        turnId: turns[owner].id,
        toolCallId: `call_${owner}`,
        tool: "shell",
        args: "{}",
        description: owner,
        riskLevel: "medium",
        ownerId: owner,
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
      expect(await status(turns.movedOn.id)).toBe("interrupted");
      expect((await store.getApproval(db, approvals.alive.id))?.status).toBe("pending");
      expect((await store.getApproval(db, approvals.dead.id))?.status).toBe("interrupted");
      // A dead holder's claim is taken from it (the epoch rises); a live holder's stays as it was.
      const session = (id: string) =>
        db.session.findUnique({ where: { id }, select: { epoch: true, claimOwnerId: true } });
      expect(await session(turns.dead.sessionId)).toEqual({ epoch: turns.dead.epoch + 1, claimOwnerId: null });
      expect(await session(turns.alive.sessionId)).toEqual({ epoch: turns.alive.epoch, claimOwnerId: "alive" });
      expect(await session(turns.movedOn.sessionId)).toEqual({ epoch: takenOver.claim!.epoch, claimOwnerId: "alive" });
      const ended = async (turn: { sessionId: string }) =>
        (await log.read(turn.sessionId, 0))
          .filter((event) => event.type === "turn.completed")
          .map((event) => (event.payload as { turnId: string }).turnId);
      // Each interrupted turn's log ends it once, whichever sweep settled it; the live one's does not.
      for (const turn of [turns.dead, turns.killed, turns.legacy, turns.movedOn])
        expect(await ended(turn)).toEqual([turn.id]);
      expect(await ended(turns.alive)).toEqual([]);
    } finally {
      await leaseA.stop();
      await leaseB.stop();
      await log.close();
    }
    // A clean stop removes the owner's row.
    expect((await store.freshOwners(db, new Date(0))).map((owner) => owner.id)).not.toContain(leaseA.id);
  });
});
