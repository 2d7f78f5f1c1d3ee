import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OwnerLease, SessionClaims } from "../../../server/leases";
import * as store from "../../../server/store";
import { dropTestDatabases, testDatabaseUrl } from "../../db";

describe("leases: a process's claims and releases of one session", () => {
  let db: store.Db;
  let home: string;
  let lease: OwnerLease;
  let claims: SessionClaims;

  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), "wl-claims-"));
    ({ db } = await store.openDb(home, testDatabaseUrl(home)));
    lease = new OwnerLease(db, { kind: "web", ttlMs: 10_000, heartbeatMs: 60_000 });
    await lease.start();
    claims = new SessionClaims(db, lease);
  });

  afterAll(async () => {
    await lease.stop();
    await db.$disconnect();
    await dropTestDatabases();
    fs.rmSync(home, { recursive: true, force: true });
  });

  const holder = async (sessionId: string) =>
    (await db.session.findUnique({ where: { id: sessionId }, select: { claimOwnerId: true } }))?.claimOwnerId;

  it("a release for a claim taken again since (a prompt while the last turn finished) leaves it held", async () => {
    const session = await store.createSession(db, { workspace: path.join(home, "a") });
    const first = await claims.claim(session.id);
    const again = await claims.claim(session.id);
    expect(again.epoch).toBe(first.epoch);
    await claims.release(first);
    expect(await holder(session.id)).toBe(lease.id);
    await claims.release(again);
    expect(await holder(session.id)).toBeNull();
  });

  it("a claim made while a release is under way waits for it, then takes the session afresh", async () => {
    const session = await store.createSession(db, { workspace: path.join(home, "b") });
    const first = await claims.claim(session.id);
    const releasing = claims.release(first);
    const next = await claims.claim(session.id);
    await releasing;
    expect(next.epoch).toBe(first.epoch + 1);
    expect(await holder(session.id)).toBe(lease.id);
    await claims.release(next);
    expect(await holder(session.id)).toBeNull();
  });
});
