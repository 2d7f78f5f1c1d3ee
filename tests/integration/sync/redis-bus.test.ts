import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRedis, type RedisLink } from "../../../server/bus";
import type { EventEnvelope } from "../../../server/protocol";
import { EventLog } from "../../../server/sessions";
import * as store from "../../../server/store";
import { dropTestDatabases, testDatabaseUrl } from "../../db";
import { waitFor } from "../../support/wait";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

describe("the Redis bus", () => {
  let home: string;
  let a: { db: store.Db; link: RedisLink; log: EventLog };
  let b: { db: store.Db; link: RedisLink; log: EventLog };

  beforeAll(async () => {
    home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-redis-bus-"));
    // Each test run its own key prefix: parallel runs on one Redis never hear each other.
    const prefix = `wlt-${randomUUID()}`;
    const open = async () => {
      const { db } = await store.openDb(home, testDatabaseUrl(home));
      const link = await connectRedis(REDIS_URL, prefix);
      return { db, link, log: new EventLog(db, link.bus) };
    };
    a = await open();
    b = await open();
    // Both buses' subscriptions have reached Redis before anything is published.
    const probe = new Redis(REDIS_URL);
    try {
      await waitFor(
        async () => ((await probe.pubsub("NUMSUB", `${prefix}:log`)) as [string, number])[1] >= 2,
        5_000,
        "both buses subscribed on Redis",
      );
    } finally {
      probe.disconnect();
    }
  });

  afterAll(async () => {
    for (const side of [a, b]) {
      await side?.log.close();
      await side?.link.close();
      await side?.db.$disconnect();
    }
    await dropTestDatabases();
  });

  it("wakes another process's listeners with each committed write, in order", async () => {
    const session = await store.createSession(a.db, { workspace: home });
    await Promise.all([a.log.open(session.id), b.log.open(session.id)]);
    const seenByB: EventEnvelope[] = [];
    b.log.subscribe(session.id, (event) => seenByB.push(event));
    for (let i = 0; i < 20; i++) a.log.append(session.id, { type: "notice", payload: { level: "info", text: `${i}` } });
    // Within a second: the message woke B, not a poll (there is none with this bus).
    await waitFor(() => seenByB.length === 20, 1_000, "B hearing A's events over Redis");
    expect(seenByB.map((event) => event.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(seenByB.map((event) => (event.payload as { text: string }).text)).toEqual(
      Array.from({ length: 20 }, (_, i) => `${i}`),
    );
  });
});
