import Database from "better-sqlite3";
import { beforeAll, describe, expect, it, vi, type MockInstance } from "vitest";
import type { Db } from "../../../server/store";
import { TEST_POSTGRES } from "../../db";
import { useStoreDb } from "./store-db";

// SQLite's connection (server/store/sqlite-adapter.ts) keeps its prepared statements.
describe.skipIf(TEST_POSTGRES)("store: SQLite statements are prepared once", () => {
  let prepare: MockInstance;
  let db: Db;
  // Before the database opens: the connection takes `prepare` when it connects.
  beforeAll(() => void (prepare = vi.spyOn(Database.prototype, "prepare")));
  useStoreDb("wl-store-statements-", (opened) => (db = opened));
  const preparedTimes = (sql: string) => prepare.mock.calls.filter(([text]) => text === sql).length;

  it("a statement run again with other values is not prepared again, and runs with its own values", async () => {
    const sql = "SELECT ? + 1 AS v";
    const answers = [];
    for (const value of [1, 41, 99]) answers.push(await db.$queryRawUnsafe<{ v: number }[]>(sql, value));
    expect(answers.map(([row]) => row.v)).toEqual([2, 42, 100]);
    expect(preparedTimes(sql)).toBe(1);
    // Writes and transactions go through the same statements.
    await db.$executeRawUnsafe('CREATE TABLE "Kept" ("a" INTEGER)');
    for (const value of [1, 2])
      await db.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('INSERT INTO "Kept" ("a") VALUES (?)', value);
      });
    expect(preparedTimes('INSERT INTO "Kept" ("a") VALUES (?)')).toBe(1);
    expect(preparedTimes("BEGIN")).toBe(1);
    expect(await db.$queryRawUnsafe('SELECT "a" FROM "Kept"')).toEqual([{ a: 1 }, { a: 2 }]);
  });

  // NORMAL is durable across a crash of the process in WAL mode, and much faster than FULL. It is
  // better-sqlite3's build default in WAL mode (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1), so no pragma sets it.
  it("runs in WAL mode with synchronous = NORMAL", async () => {
    expect(await db.$queryRawUnsafe("PRAGMA journal_mode")).toEqual([{ journal_mode: "wal" }]);
    expect(await db.$queryRawUnsafe("PRAGMA synchronous")).toEqual([{ synchronous: 1n }]);
  });

  it("a kept statement reads the table as it is after its schema changed", async () => {
    await db.$executeRawUnsafe('CREATE TABLE "Changing" ("a" INTEGER)');
    await db.$executeRawUnsafe('INSERT INTO "Changing" ("a") VALUES (1)');
    const read = () => db.$queryRawUnsafe<Record<string, unknown>[]>('SELECT * FROM "Changing"');
    expect(await read()).toEqual([{ a: 1 }]);
    await db.$executeRawUnsafe('ALTER TABLE "Changing" ADD COLUMN "b" TEXT');
    await db.$executeRawUnsafe('UPDATE "Changing" SET "b" = \'two\'');
    expect(await read()).toEqual([{ a: 1, b: "two" }]);
    expect(preparedTimes('SELECT * FROM "Changing"')).toBe(1);
  });
});
