import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { openDb, type Db } from "../../../server/store";
import { dropTestDatabases, testDatabaseUrl } from "../../db";

/**
 * A database of the test file's own, open for its tests: SQLite in a temporary home, or a
 * PostgreSQL database of its own in the PostgreSQL pass; dropped afterwards.
 */
export function useStoreDb(prefix: string, opened: (db: Db) => void): void {
  let db: Db;
  let home: string;
  beforeAll(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    ({ db } = await openDb(home, testDatabaseUrl(home)));
    opened(db);
  });
  afterAll(async () => {
    await db.$disconnect();
    await dropTestDatabases();
    fs.rmSync(home, { recursive: true, force: true });
  });
}
