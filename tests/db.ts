import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";

/**
 * Tests on PostgreSQL: with WORLDLINE_TEST_POSTGRES set to a server URL (e.g.
 * postgresql://postgres@127.0.0.1:5432), every data dir (WORLDLINE_HOME) a test uses gets its own
 * database, named after the dir's path, so processes sharing a home share a database, as they
 * share the SQLite file, and parallel runs never meet. The bridge creates it on first open;
 * `dropTestDatabases` (run after each test file) drops those this process named.
 */
export const TEST_POSTGRES = process.env.WORLDLINE_TEST_POSTGRES ?? "";

const named = new Set<string>();

/** The DATABASE_URL for a data dir: "" (SQLite in the dir) unless tests run on PostgreSQL. */
export function testDatabaseUrl(home: string): string {
  if (!TEST_POSTGRES) return "";
  const name = `wlt_${createHash("sha256").update(home).digest("hex").slice(0, 24)}`;
  named.add(name);
  const url = new URL(TEST_POSTGRES);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops the databases this process handed out (connections still open are ended). */
export async function dropTestDatabases(): Promise<void> {
  if (!TEST_POSTGRES || named.size === 0) return;
  const url = new URL(TEST_POSTGRES);
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    for (const name of named) await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    named.clear();
  } finally {
    await client.end();
  }
}

/** Rows of a query (quoted identifiers: it runs on both) on a data dir's database, read-only on SQLite. */
export async function queryTestDb<T>(home: string, sql: string): Promise<T[]> {
  if (!TEST_POSTGRES) {
    const db = new Database(path.join(home, "worldline.db"), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: testDatabaseUrl(home) });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** The row count of every table of the model (Prisma's _prisma_migrations left out). */
export async function tableCounts(home: string): Promise<Record<string, number>> {
  const tables = await queryTestDb<{ name: string }>(
    home,
    TEST_POSTGRES
      ? "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE '\\_%'"
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'",
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const [row] = await queryTestDb<{ n: number | string }>(home, `SELECT count(*) AS n FROM "${name}"`);
    counts[name] = Number(row.n);
  }
  return counts;
}

/**
 * Everything the database keeps, as text to search: on SQLite the raw bytes of the file, its WAL,
 * shared memory and journal (latin1); on PostgreSQL every row of every table.
 */
export async function databaseText(home: string): Promise<string> {
  let text = "";
  if (!TEST_POSTGRES) {
    for (const suffix of ["", "-wal", "-shm", "-journal"]) {
      const bytes = await fs.readFile(path.join(home, `worldline.db${suffix}`)).catch(() => Buffer.alloc(0));
      text += bytes.toString("latin1");
    }
    return text;
  }
  const tables = await queryTestDb<{ name: string }>(
    home,
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'",
  );
  for (const { name } of tables) {
    const rows = await queryTestDb<{ row: string }>(home, `SELECT t::text AS row FROM "${name}" t`);
    text += rows.map((r) => r.row).join("\n");
  }
  return text;
}
