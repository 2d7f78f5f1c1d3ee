import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "./generated/prisma/client";
import { applyMigrations, BUSY_TIMEOUT_MS } from "./migrate";

export type Db = PrismaClient;

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../prisma/migrations");

/** Opens (creating and migrating) the database file under the data dir. */
export async function openDb(home: string): Promise<{ db: Db; file: string; migrated: string[] }> {
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  const file = path.join(home, "worldline.db");
  const migrated = applyMigrations(file, MIGRATIONS_DIR);
  const adapter = new PrismaBetterSQLite3({ url: `file:${file}`, timeout: BUSY_TIMEOUT_MS });
  const db = new PrismaClient({ adapter });
  await db.$connect();
  // NORMAL is durable across application crashes in WAL mode and much faster than FULL.
  await db.$queryRawUnsafe("PRAGMA synchronous = NORMAL");
  await db.$queryRawUnsafe(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return { db, file, migrated };
}
