import { describe, expect, it } from "vitest";
import { addRunner, createSession, getRunner, renameRunner, revokeRunner, type Db } from "../../../server/store";
import { useStoreDb } from "./store-db";

describe("store: renaming a runner", () => {
  let db: Db;
  useStoreDb("wl-store-runners-", (opened) => (db = opened));
  const add = (name: string) =>
    addRunner(db, {
      name,
      enrollHash: `enroll-${name}`,
      enrollExpiresAt: new Date(Date.now() + 60_000),
      allowedRoots: [],
    });

  it("moves its sessions with it; a name in use, its own included, is refused and changes nothing", async () => {
    await add("alpha");
    await add("beta");
    const session = await createSession(db, { workspace: "/tmp/wl-runner-rename", runner: "alpha" });
    await expect(renameRunner(db, "alpha", "beta")).rejects.toMatchObject({ code: "runner:invalid" });
    await expect(renameRunner(db, "alpha", "alpha")).rejects.toMatchObject({ code: "runner:invalid" });
    expect(await getRunner(db, "alpha")).not.toBeNull();
    expect(await renameRunner(db, "alpha", "gamma")).toBe(true);
    expect(await getRunner(db, "alpha")).toBeNull();
    expect((await db.session.findUniqueOrThrow({ where: { id: session.id } })).runner).toBe("gamma");
    expect(await renameRunner(db, "missing", "delta")).toBe(false);
    expect(await renameRunner(db, "missing", "missing")).toBe(false);
  });

  it("a revoked runner keeps its name: another cannot take it, and it cannot be renamed", async () => {
    await add("old");
    await add("new");
    expect(await revokeRunner(db, "old")).toBe(true);
    await expect(renameRunner(db, "new", "old")).rejects.toMatchObject({ code: "runner:invalid" });
    expect(await renameRunner(db, "old", "older")).toBe(false);
  });
});
