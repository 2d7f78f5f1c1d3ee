import { afterEach, describe, expect, it, vi } from "vitest";
import { LocalBus } from "../../../server/bus";
import * as store from "../../../server/store";
import { useStoreDb } from "../store/store-db";
import { hold, waitFor } from "../../support/wait";

/** The local bus's tail of other processes' events (server/bus/local.ts) while its reads fail, and after. */
describe("bus: the local tail while the database does not answer it", () => {
  let db: store.Db;
  useStoreDb("wl-local-bus-", (opened) => (db = opened));
  afterEach(() => vi.restoreAllMocks());

  it("logs the failure once, backs off its reads, and says once when it reads again", async () => {
    const session = await store.createSession(db, { workspace: "/tmp/wl-local-bus" });
    const logged: string[] = [];
    vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void logged.push(args.join(" ")));
    let reads = 0;
    const ended: number[] = [];
    const bus = new LocalBus(db, 20);
    // The table the tail reads goes away for a while: every read fails, as during an outage.
    await db.$executeRawUnsafe(`ALTER TABLE "Event" RENAME TO "EventAway"`);
    bus.start({
      ended: (_sessionId, seq) => ended.push(seq),
      watching: () => {
        reads += 1;
        return new Map([[session.id, 0]]);
      },
      approvalsChanged: () => undefined,
      watchingApprovals: () => false,
    });
    try {
      await hold(1_200, "a fixed window in which to count the failing reads");
      // At 20 ms a read, 1.2 s is ~60 reads without backoff; doubling from 20 ms makes it 6.
      expect(reads).toBeGreaterThanOrEqual(3);
      expect(reads).toBeLessThanOrEqual(8);
      expect(logged.filter((line) => line.includes("reading other processes' events failed"))).toHaveLength(1);
      await db.$executeRawUnsafe(`ALTER TABLE "EventAway" RENAME TO "Event"`);
      await store.insertEvents(db, [
        { sessionId: session.id, seq: 1, type: "notice", payload: "{}", turnId: null, createdAt: new Date() },
      ]);
      await waitFor(() => ended.includes(1), 10_000, "the tail to read the new event");
      const recovered = reads;
      await waitFor(() => reads >= recovered + 10, 2_000, "reads at the interval again");
      expect(logged.filter((line) => line.includes("reading other processes' events again after"))).toHaveLength(1);
      expect(logged).toHaveLength(2);
    } finally {
      await bus.close();
    }
  });
});
