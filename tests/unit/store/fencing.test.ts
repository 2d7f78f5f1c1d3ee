import { describe, expect, it } from "vitest";
import { WorldlineError } from "../../../server/errors";
import {
  appendHistory,
  beatOwner,
  checkConsistency,
  claimSession,
  createCheckpoint,
  createSession,
  createTurn,
  finishTurn,
  insertEvents,
  interruptOrphanTurn,
  readHistory,
  releaseClaim,
  setSessionStatus,
  settleAnnouncedCheckpoints,
  takeCheckpointNumber,
  type Db,
} from "../../../server/store";
import { toWireError } from "../../../server/transport/errors";
import { useStoreDb } from "./store-db";

describe("store: fencing, numbers taken by the store, consistency", () => {
  let db: Db;
  useStoreDb("wl-store-fencing-", (opened) => (db = opened));

  it("grants a session's claim to one live owner at a time, raising the epoch on each new holder", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-fencing" });
    const [first, second] = await Promise.all([
      claimSession(db, session.id, "o-a", ["o-a", "o-b"]),
      claimSession(db, session.id, "o-b", ["o-a", "o-b"]),
    ]);
    const winners = [first, second].filter((result) => result.claim !== null);
    expect(winners).toHaveLength(1);
    const loser = first.claim ? second : first;
    expect(loser.holder).toBe(winners[0].claim!.ownerId);
    const held = winners[0].claim!;
    expect(held.epoch).toBe(1);
    // The holder claims again (a queued prompt): same epoch.
    expect((await claimSession(db, session.id, held.ownerId, ["o-a", "o-b"])).claim?.epoch).toBe(1);
    // A holder that is not live any more loses it to the next claimant, whose epoch is higher.
    const other = held.ownerId === "o-a" ? "o-b" : "o-a";
    const taken = await claimSession(db, session.id, other, [other]);
    expect(taken.claim?.epoch).toBe(2);
    await releaseClaim(db, held); // a stale release changes nothing
    expect((await claimSession(db, session.id, held.ownerId, [held.ownerId, other])).claim).toBeNull();
    await releaseClaim(db, taken.claim!);
    expect((await claimSession(db, session.id, held.ownerId, [held.ownerId, other])).claim?.epoch).toBe(3);
  });

  it("without a list of live owners, takes only a free claim or its own, never another holder's", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-fencing" });
    const mine = await claimSession(db, session.id, "o-a", null);
    expect(mine.claim?.epoch).toBe(1);
    expect((await claimSession(db, session.id, "o-a", null)).claim?.epoch).toBe(1);
    // o-a may be dead, but nobody judged that: o-b does not take it over.
    expect(await claimSession(db, session.id, "o-b", null)).toEqual({ claim: null, holder: "o-a" });
    await releaseClaim(db, mine.claim!);
    expect((await claimSession(db, session.id, "o-b", null)).claim).toMatchObject({ ownerId: "o-b", epoch: 2 });
  });

  it("refuses a stale owner's history and status writes after a sweep took its turn", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-fencing" });
    const { claim } = await claimSession(db, session.id, "o-cut-off", ["o-cut-off"]);
    const turn = await createTurn(db, session.id, "p", claim!.epoch);
    await appendHistory(db, session.id, [{ position: 0, kind: "message", data: "{}" }], claim!);
    // While its claim's holder counts as live, the turn is the holder's: a sweep leaves it.
    expect(await interruptOrphanTurn(db, turn, ["o-cut-off", "o-sweeper"])).toBe(false);
    expect((await db.turn.findUnique({ where: { id: turn.id } }))?.status).toBe("running");
    // Another bridge judged the owner dead and swept its turn: the epoch rises with it.
    expect(await interruptOrphanTurn(db, turn, ["o-sweeper"])).toBe(true);
    expect(await db.session.findUnique({ where: { id: session.id } })).toMatchObject({
      epoch: claim!.epoch + 1,
      claimOwnerId: null,
    });
    await expect(
      appendHistory(db, session.id, [{ position: 1, kind: "message", data: "{}" }], claim!),
    ).rejects.toMatchObject({ code: "session:fenced" });
    await expect(
      finishTurn(db, turn.id, { status: "completed" }, { sessionId: session.id, epoch: claim!.epoch }),
    ).rejects.toMatchObject({ code: "session:fenced" });
    expect((await readHistory(db, session.id)).map((row) => row.position)).toEqual([0]);
    expect((await db.turn.findUnique({ where: { id: turn.id } }))?.status).toBe("interrupted");
    const status = async () => (await db.session.findUnique({ where: { id: session.id } }))?.status;
    const before = await status();
    await expect(setSessionStatus(db, session.id, "idle", claim!)).rejects.toMatchObject({ code: "session:fenced" });
    expect(await status()).toBe(before);
    // Unfenced (no claim held) and for a gone session, as before.
    expect(await setSessionStatus(db, session.id, "idle")).toBe(true);
    expect(await setSessionStatus(db, "no-such-session", "idle", claim!)).toBe(false);
  });

  it("gives a swept turn's checkpoints it announced but never stored a row without a snapshot, and keeps the stored ones", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-fencing" });
    const { claim } = await claimSession(db, session.id, "o-frozen", ["o-frozen"]);
    const turn = await createTurn(db, session.id, "p", claim!.epoch);
    const [first, second] = [await takeCheckpointNumber(db, session.id), await takeCheckpointNumber(db, session.id)];
    const announce = (seq: number, checkpointId: string, number: number, step: number) => ({
      sessionId: session.id,
      seq,
      type: "checkpoint.created",
      payload: JSON.stringify({ checkpointId, number, turn: 1, step, reason: step === 0 ? "turn" : "step" }),
      turnId: turn.id,
      createdAt: new Date(),
    });
    await insertEvents(db, [announce(1, "cp_saved", first, 0), announce(2, "cp_lost", second, 1)], {
      sessionId: session.id,
      epoch: claim!.epoch,
    });
    // The first row was stored with its snapshot; the owner froze before the second's.
    await createCheckpoint(
      db,
      {
        id: "cp_saved",
        number: first,
        sessionId: session.id,
        turn: 1,
        step: 0,
        historyPosition: 0,
        reason: "turn",
        snapshot: "abc",
      },
      claim!,
    );
    await appendHistory(db, session.id, [{ position: 0, kind: "message", data: "{}" }], claim!);
    expect(await interruptOrphanTurn(db, turn, [])).toBe(true);
    expect(await settleAnnouncedCheckpoints(db, session.id, turn.id)).toBe(1);
    const rows = await db.checkpoint.findMany({ where: { sessionId: session.id }, orderBy: { number: "asc" } });
    expect(
      rows.map(({ id, number, step, snapshot, historyPosition }) => ({ id, number, step, snapshot, historyPosition })),
    ).toEqual([
      { id: "cp_saved", number: first, step: 0, snapshot: "abc", historyPosition: 0 },
      { id: "cp_lost", number: second, step: 1, snapshot: null, historyPosition: 1 },
    ]);
    expect(rows[1].note).toMatch(/stopped before this checkpoint's snapshot was saved/);
    // The stale owner's own row for it comes too late: the settled row stays as it is (the insert is
    // idempotent by id), and settling again adds nothing.
    const late = await createCheckpoint(
      db,
      {
        id: "cp_lost",
        number: second,
        sessionId: session.id,
        turn: 1,
        step: 1,
        historyPosition: 0,
        reason: "step",
        snapshot: "def",
      },
      claim!,
    );
    expect(late).toMatchObject({ id: "cp_lost", snapshot: null, historyPosition: 1 });
    expect(await settleAnnouncedCheckpoints(db, session.id, turn.id)).toBe(0);
  });

  it("takes checkpoint numbers from the store: writers that alternate never share one", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-fencing" });
    const numbers = await Promise.all(Array.from({ length: 6 }, () => takeCheckpointNumber(db, session.id)));
    expect(numbers.slice().sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5]);
    // A turn's first checkpoint takes its own and the next one's in one statement.
    expect(await takeCheckpointNumber(db, session.id, 2)).toBe(6);
    expect(await takeCheckpointNumber(db, session.id)).toBe(8);
    const row = await createCheckpoint(db, {
      sessionId: session.id,
      turn: 1,
      step: 0,
      historyPosition: 0,
      reason: "turn",
    });
    expect(row.number).toBe(9);
  });

  it("the start check gives a checkpoint an ended turn announced but never stored a row, and leaves a running turn's alone", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-fencing" });
    const ended = await createTurn(db, session.id, "p");
    const running = await createTurn(db, session.id, "q");
    const announce = (seq: number, turnId: string, checkpointId: string, number: number) => ({
      sessionId: session.id,
      seq,
      type: "checkpoint.created",
      payload: JSON.stringify({ checkpointId, number, turn: 1, step: seq, reason: "step" }),
      turnId,
      createdAt: new Date(),
    });
    // One after the other: taken at once, PostgreSQL may hand them out in any order.
    const saved = await takeCheckpointNumber(db, session.id);
    const lost = await takeCheckpointNumber(db, session.id);
    const pending = await takeCheckpointNumber(db, session.id);
    await insertEvents(db, [
      announce(1, ended.id, "cp_doc_saved", saved),
      announce(2, ended.id, "cp_doc_lost", lost),
      announce(3, running.id, "cp_doc_pending", pending),
    ]);
    const row = { sessionId: session.id, turn: 1, step: 1, historyPosition: 0, reason: "step" };
    await createCheckpoint(db, { ...row, id: "cp_doc_saved", number: saved, snapshot: "abc" });
    // The row's write failed for good (the durable writer gave up): the turn still ended.
    await finishTurn(db, ended.id, { status: "completed" });
    const mine = async (fix: boolean) =>
      (await checkConsistency(db, { fix })).filter((f) => f.sessionId === session.id);
    expect(await mine(false)).toEqual([
      {
        kind: "announced_checkpoint_without_row",
        sessionId: session.id,
        detail: `checkpoint cp_doc_lost was announced by turn ${ended.id} but never stored`,
        fixed: false,
      },
    ]);
    expect((await mine(true)).map((f) => [f.kind, f.fixed])).toEqual([["announced_checkpoint_without_row", true]]);
    const rows = await db.checkpoint.findMany({ where: { sessionId: session.id }, orderBy: { number: "asc" } });
    expect(rows.map((r) => [r.id, r.number, r.snapshot])).toEqual([
      ["cp_doc_saved", saved, "abc"],
      ["cp_doc_lost", lost, null],
    ]);
    expect(rows[1].note).toMatch(/snapshot/);
    expect(await mine(true)).toEqual([]);
  });

  it("the start check repairs a lagging counter and a claim of a gone process, and reports a history gap", async () => {
    const session = await createSession(db, { workspace: "/tmp/wl-fencing" });
    await db.checkpoint.create({
      data: { sessionId: session.id, number: 4, turn: 1, step: 0, historyPosition: 0, reason: "turn" },
    });
    await db.historyEntry.createMany({
      data: [0, 2].map((position) => ({ sessionId: session.id, position, kind: "message", data: "{}" })),
    });
    await beatOwner(db, { id: "o-alive", kind: "web", host: "h", pid: 1 }, new Date());
    await db.session.update({ where: { id: session.id }, data: { claimOwnerId: "o-gone" } });
    const findings = (await checkConsistency(db, { fix: true })).filter((f) => f.sessionId === session.id);
    expect(findings.map((f) => [f.kind, f.fixed]).sort()).toEqual([
      ["checkpoint_counter", true],
      ["history_gap", false],
      ["stale_claim", true],
    ]);
    expect(await takeCheckpointNumber(db, session.id)).toBe(5);
    const after = await db.session.findUnique({ where: { id: session.id } });
    expect(after?.claimOwnerId).toBeNull();
  });
});

describe("wire errors for faults and capacity", () => {
  it("answers 503 with a specific code for store faults and 429 with Retry-After at capacity", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    expect(toWireError(refused)).toMatchObject({ status: 503, error: { code: "store:unavailable" } });
    const full = { code: "P2010", meta: { driverAdapterError: { cause: { originalCode: "SQLITE_FULL" } } } };
    expect(toWireError(full)).toMatchObject({ status: 503, error: { code: "disk:full" } });
    expect(toWireError(new WorldlineError("bus:unavailable", "Redis is down"))).toMatchObject({ status: 503 });
    const capacity = new WorldlineError("runtime:at_capacity", "full", { details: { retry_after_s: 5 } });
    expect(toWireError(capacity)).toMatchObject({ status: 429, retryAfter: 5 });
    expect(toWireError(new WorldlineError("approval:owner_gone", "gone"))).toMatchObject({ status: 409 });
  });
});
