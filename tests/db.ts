import { createHash } from "node:crypto";
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
