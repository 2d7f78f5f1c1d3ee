import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis, type RedisLink } from "../../../server/bus";
import { WorldlineError } from "../../../server/errors";
import { Rpc } from "../../../server/team";
import { toWireError } from "../../../server/transport/errors";

/**
 * A call forwarded to the bridge running a session (server/team/rpc.ts) fails on the forwarding
 * bridge with the answer the holder would have given: same status, code, message, details and
 * Retry-After. Two Rpc ends on this machine's Redis (this run's own key prefix).
 */
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

describe("team: an error forwarded between bridges", () => {
  const prefix = `wl-test-${randomUUID()}`;
  let links: RedisLink[] = [];
  let holder: Rpc;
  let caller: Rpc;
  let thrown: () => unknown;

  beforeAll(async () => {
    links = [await connectRedis(REDIS_URL, prefix), await connectRedis(REDIS_URL, prefix)];
    holder = new Rpc(links[0], "bridge_holder");
    caller = new Rpc(links[1], "bridge_caller");
    await holder.start();
    await caller.start();
    holder.handle("turn.prompt", () => {
      throw thrown();
    });
  });

  afterAll(async () => {
    holder?.close();
    caller?.close();
    await Promise.all(links.map((link) => link.close()));
  });

  /** What the holder answers over HTTP for the error, and what the forwarding bridge answers. */
  async function bothAnswers(error: () => unknown) {
    thrown = error;
    const here = toWireError(error());
    const forwarded = await caller.call("bridge_holder", "turn.prompt", { sessionId: "s1", text: "hi" }).then(
      () => {
        throw new Error("the forwarded call succeeded");
      },
      (failure: unknown) => toWireError(failure),
    );
    return { here, forwarded };
  }

  it("keeps a 429's Retry-After and details (a holder at its turn capacity)", async () => {
    const { here, forwarded } = await bothAnswers(
      () =>
        new WorldlineError("runtime:at_capacity", "This bridge is at its turn capacity (8 turns running).", {
          details: { capacity: 8, retry_after_s: 5 },
        }),
    );
    expect(here).toMatchObject({ status: 429, retryAfter: 5 });
    expect(forwarded).toEqual(here);
  });

  it("answers 503 store:unavailable when the holder cannot reach its database (a driver's own error)", async () => {
    // A real driver error: a PostgreSQL client refused on a port nothing listens on.
    const client = new pg.Client({ connectionString: "postgresql://postgres@127.0.0.1:1/none" });
    const refused = await client.connect().then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    const { here, forwarded } = await bothAnswers(() => refused);
    expect(here).toMatchObject({ status: 503, error: { code: "store:unavailable" } });
    expect(forwarded).toEqual(here);
  });

  it("keeps a conflict's details (the holder's session is busy elsewhere)", async () => {
    const { here, forwarded } = await bothAnswers(
      () => new WorldlineError("session:busy", "Session s1 is held by bridge_x.", { details: { owner: "bridge_x" } }),
    );
    expect(forwarded).toEqual(here);
    expect(forwarded.error.details).toEqual({ owner: "bridge_x" });
  });

  it("still answers team:failed (500) for an error that is a bug on the holder", async () => {
    const { forwarded } = await bothAnswers(() => new TypeError("x is undefined"));
    expect(forwarded).toMatchObject({ status: 500, error: { code: "team:failed", message: "x is undefined" } });
  });
});
