import { describe, expect, it, vi } from "vitest";
import type { Db } from "../../../server/store";
import { People } from "../../../server/people";
import { useStoreDb } from "../store/store-db";

/** How many passwords were actually checked (argon2 runs), whatever the outcome. */
const checked = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../../server/people/passwords", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../../server/people/passwords")>();
  return {
    ...real,
    verifyPassword: async (stored: string | null, password: string) => {
      checked.count += 1;
      return real.verifyPassword(stored, password);
    },
  };
});

describe("the password lock", () => {
  let db: Db;
  useStoreDb("wl-password-lock-", (opened) => (db = opened));

  it("holds against guesses sent at once to two bridges: few are checked, and the right one is then refused", async () => {
    // Two bridges on one database: the count lives in the store, not in either process.
    const one = new People(db, { oidc: false, oidcDefaultRole: "member" });
    const two = new People(db, { oidc: false, oidcDefaultRole: "member" });
    await one.addUser({ name: "gus", role: "member", password: "gus-password-1" });
    checked.count = 0;
    const guesses = Array.from({ length: 60 }, (_, i) =>
      (i % 2 ? one : two).signInWithPassword("gus", `wrong-${i}`).then(
        () => "accepted",
        (error: { code?: string }) => error.code,
      ),
    );
    const outcomes = await Promise.all(guesses);
    expect(outcomes).not.toContain("accepted");
    expect(outcomes.filter((code) => code === "auth:unauthorized")).toHaveLength(10);
    expect(outcomes.filter((code) => code === "auth:rate_limited")).toHaveLength(50);
    expect(checked.count).toBe(10);
    await expect(two.signInWithPassword("GUS", "gus-password-1")).rejects.toMatchObject({
      code: "auth:rate_limited",
    });
    expect(checked.count).toBe(10);
  });

  it("a right password within the limit signs in and starts the count over", async () => {
    const people = new People(db, { oidc: false, oidcDefaultRole: "member" });
    await people.addUser({ name: "hal", role: "member", password: "hal-password-1" });
    for (let i = 0; i < 9; i += 1)
      await expect(people.signInWithPassword("hal", "wrong")).rejects.toMatchObject({ code: "auth:unauthorized" });
    await expect(people.signInWithPassword("hal", "hal-password-1")).resolves.toMatchObject({
      person: { name: "hal" },
    });
    for (let i = 0; i < 9; i += 1)
      await expect(people.signInWithPassword("hal", "wrong")).rejects.toMatchObject({ code: "auth:unauthorized" });
    await expect(people.signInWithPassword("hal", "hal-password-1")).resolves.toMatchObject({
      person: { name: "hal" },
    });
  });
});
