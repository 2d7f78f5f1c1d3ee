import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";

/** Any constant shared by every Worldline process: advisory locks are per database. */
const MIGRATION_LOCK = 0x776c_6d69; // "wlmi"

/** Prisma's own table, with the columns `prisma migrate deploy` creates on PostgreSQL. */
const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Applies prisma/postgres/migrations/*\/migration.sql in order, each in its own transaction with its
 * `_prisma_migrations` row (same columns and checksum as Prisma's). Prisma's own `migrate deploy`
 * cannot run here (its WebAssembly schema engine fails on PostgreSQL through the pg adapter).
 * Several bridges starting at once serialize on an advisory lock, so each migration runs once.
 */
export async function applyPostgresMigrations(url: string, migrationsDir: string): Promise<string[]> {
  const client = await connectCreating(url);
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await client.query(MIGRATIONS_TABLE);
    const { rows } = await client.query<{ migration_name: string }>(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Set(rows.map((row) => row.migration_name));
    const pending = fs
      .readdirSync(migrationsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !applied.has(entry.name))
      .map((entry) => entry.name)
      .sort();
    for (const name of pending) {
      const sql = fs.readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ($1, $2, now(), $3, 1)`,
          [randomUUID(), checksum, name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${name} failed on PostgreSQL: ${(error as Error).message}`, { cause: error });
      }
    }
    return pending;
  } finally {
    // Ending the session releases the advisory lock too.
    await client.end();
  }
}

/**
 * A connection to the URL's database, creating the database first when it does not exist (as
 * `prisma migrate deploy` does), so a fresh server needs no manual step. Two processes creating
 * it at once are fine: the loser sees it exists.
 */
async function connectCreating(url: string): Promise<pg.Client> {
  try {
    return await connect(url);
  } catch (error) {
    if ((error as { code?: string }).code !== "3D000") throw error;
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = await connect(admin.toString());
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
        break;
      } catch (error) {
        const code = (error as { code?: string }).code ?? "";
        // 42P04: duplicate_database; 23505: the same, raced in pg_database's unique index.
        if (code === "42P04" || code === "23505") break;
        // 55006: the template is in use, e.g. by another CREATE DATABASE copying it right now.
        if (code !== "55006" || attempt >= 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  } finally {
    await client.end();
  }
  return connect(url);
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {}); // the migration error below is the one to report
    throw error;
  }
  return client;
}
