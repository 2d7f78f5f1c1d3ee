import { describe, expect, it } from "vitest";
import {
  claimDelivery,
  createActionToken,
  focusedOwners,
  putFocus,
  settingOnce,
  useActionToken,
  type Db,
} from "../../../server/store";
import { useStoreDb } from "./store-db";

describe("store: push", () => {
  let db: Db;
  useStoreDb("wl-store-push-", (opened) => (db = opened));

  it("claims an (event, device) pair once, however many bridges race for it", async () => {
    const claims = await Promise.all(Array.from({ length: 6 }, () => claimDelivery(db, "turn:t1", "device-1")));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await claimDelivery(db, "turn:t1", "device-2")).toBe(true);
    expect(await claimDelivery(db, "turn:t2", "device-1")).toBe(true);
  });

  it("uses an action token once, for its approval only, before it expires", async () => {
    const later = new Date(Date.now() + 60_000);
    await createActionToken(db, { tokenHash: "h1", approvalId: "a1", decidedBy: "alice", expiresAt: later });
    await createActionToken(db, {
      tokenHash: "h2",
      approvalId: "a2",
      decidedBy: "alice",
      expiresAt: new Date(Date.now() - 1),
    });
    expect(await useActionToken(db, "h1", "a2")).toBeNull();
    const uses = await Promise.all([useActionToken(db, "h1", "a1"), useActionToken(db, "h1", "a1")]);
    expect(uses.filter((who) => who === "alice")).toHaveLength(1);
    expect(await useActionToken(db, "h1", "a1")).toBeNull();
    expect(await useActionToken(db, "h2", "a2")).toBeNull();
    expect(await useActionToken(db, "nope", "a1")).toBeNull();
  });

  it("knows who has a session focused until the row expires", async () => {
    await putFocus(db, {
      viewer: "v1",
      owner: "token:default",
      sessionId: "s1",
      expiresAt: new Date(Date.now() + 60_000),
    });
    await putFocus(db, { viewer: "v2", owner: "person:p2", sessionId: "s1", expiresAt: new Date(Date.now() - 1) });
    expect([...(await focusedOwners(db, "s1"))]).toEqual(["token:default"]);
    expect((await focusedOwners(db, "s2")).size).toBe(0);
  });

  it("keeps the first value a setting is given (the deployment's VAPID pair)", async () => {
    const [first, second] = await Promise.all([
      settingOnce(db, "push.vapid", { k: 1 }),
      settingOnce(db, "push.vapid", { k: 2 }),
    ]);
    expect(first).toEqual(second);
    expect(await settingOnce(db, "push.vapid", { k: 3 })).toEqual(first);
  });
});
