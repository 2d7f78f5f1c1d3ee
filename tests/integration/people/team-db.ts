import pg from "pg";
import { TEST_POSTGRES } from "../../db";

/** The tests' PostgreSQL server; each team test makes its own database on it and drops it after. */
const SERVER = TEST_POSTGRES || "postgresql://postgres@127.0.0.1:5432";

export function databaseUrl(name: string): string {
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one statement on the server's `postgres` database (CREATE / DROP DATABASE). */
export async function onAdmin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl("postgres") });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
