import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EventEnvelope } from "../../../server/protocol";
import { EventLog } from "../../../server/sessions";
import * as store from "../../../server/store";

let db: store.Db;
let sessionId: string;
let log: EventLog;

beforeEach(async () => {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), "wl-log-"));
  db = (await store.openDb(home)).db;
  sessionId = (await store.createSession(db, { workspace: home })).id;
  log = new EventLog(db);
  await log.open(sessionId);
});

afterEach(async () => {
  await log.close();
  await db.$disconnect();
});

const notice = (text: string) => ({ type: "notice" as const, payload: { level: "info" as const, text } });
const delta = (text: string) => ({
  type: "message.part.delta" as const,
  payload: { turnId: "t", messageId: "m", part: "text" as const, delta: text },
});

describe("EventLog", () => {
  it("numbers events consecutively from 1 and persists them", async () => {
    for (let i = 0; i < 5; i++) log.append(sessionId, notice(`n${i}`));
    const events = await log.read(sessionId, 0);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect((await log.read(sessionId, 3)).map((e) => e.seq)).toEqual([4, 5]);
  });

  it("fans out to subscribers in order once written, never before", async () => {
    const seen: number[] = [];
    const unsubscribe = log.subscribe(sessionId, (event) => seen.push(event.seq));
    log.append(sessionId, notice("a"));
    log.append(sessionId, notice("b"));
    // Not yet committed: nobody has a seq that a clash could still change.
    expect(seen).toEqual([]);
    await log.flush();
    expect(seen).toEqual([1, 2]);
    unsubscribe();
    log.append(sessionId, notice("c"));
    await log.flush();
    expect(seen).toEqual([1, 2]);
  });

  it("delivers a part's first delta without waiting for the end of the tick", async () => {
    const seen: string[] = [];
    log.subscribe(sessionId, (event) => seen.push(event.type));
    // Whatever the event loop does next (here: the check phase, where writes of ordinary events
    // are started) comes after a long tick of promise continuations, e.g. a stream that arrived
    // whole and then the turn's end. The first token must reach the tabs within that tick.
    const atTickEnd = new Promise<string[]>((resolve) => setImmediate(() => resolve([...seen])));
    log.append(sessionId, notice("before"));
    log.append(sessionId, delta("Hel"));
    for (let i = 0; i < 1000 && seen.length < 2; i++) await Promise.resolve();
    expect(await atTickEnd).toEqual(["notice", "message.part.delta"]);
  });

  it("sends the first delta at once and coalesces the rest into one event", async () => {
    const seen: EventEnvelope[] = [];
    log.subscribe(sessionId, (event) => seen.push(event));
    log.append(sessionId, delta("Hel"));
    await log.flush();
    expect(seen).toHaveLength(1);
    log.append(sessionId, delta("lo, "));
    log.append(sessionId, delta("world"));
    log.append(sessionId, notice("after"));
    await log.flush();
    expect(seen.map((e) => e.type)).toEqual(["message.part.delta", "message.part.delta", "notice"]);
    const texts = seen
      .filter((e) => e.type === "message.part.delta")
      .map((e) => (e.payload as { delta: string }).delta);
    expect(texts.join("")).toBe("Hello, world");
    expect((await log.read(sessionId, 0)).length).toBe(3);
  });

  it("continues the sequence after reopening on the same database", async () => {
    log.append(sessionId, notice("a"));
    await log.close();
    log = new EventLog(db);
    await log.open(sessionId);
    log.append(sessionId, notice("b"));
    expect((await log.read(sessionId, 0)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it("refuses appends to a session that was not opened", () => {
    expect(() => log.append("unknown", notice("x"))).toThrow(/not open/);
  });
});

describe("EventLog persistence failures", () => {
  it("drops events of a deleted session without blocking other sessions", async () => {
    const other = (await store.createSession(db, { workspace: os.tmpdir() })).id;
    await log.open(other);
    log.append(sessionId, notice("doomed"));
    log.append(other, notice("kept"));
    await store.deleteSession(db, sessionId);
    await log.flush();
    log.append(other, notice("later"));
    expect((await log.read(other, 0)).map((e) => (e.payload as { text: string }).text)).toEqual(["kept", "later"]);
  });
});
