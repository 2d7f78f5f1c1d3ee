import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type pg from "pg";

/** The database to migrate: a SQLite file, or a PostgreSQL database by URL. */
export type MigrationTarget = { provider: "sqlite"; file: string } | { provider: "postgresql"; url: string };

/** What differs between the two databases: how the table is made, how a migration is run and recorded. */
interface MigrationConnection {
  /** Creates Prisma's `_prisma_migrations` table if missing; the names of the migrations applied. */
  applied(): Promise<Set<string>>;
  /** Runs one migration and writes its row, in one transaction. */
  apply(name: string, sql: string, checksum: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Applies `<migrationsDir>/*\/migration.sql` in order (prisma/migrations for SQLite,
 * prisma/postgres/migrations for PostgreSQL), each in its own transaction with its row in Prisma's
 * own `_prisma_migrations` table (same columns and checksum), so `prisma migrate deploy` and this
 * function agree on what is applied. Done in process: spawning the Prisma CLI costs seconds on
 * every start, and its WebAssembly schema engine fails on PostgreSQL through the pg adapter.
 * Returns the names it applied.
 */
export async function applyMigrations(target: MigrationTarget, migrationsDir: string): Promise<string[]> {
  const connection = target.provider === "postgresql" ? await openPostgres(target.url) : openSqlite(target.file);
  try {
    const applied = await connection.applied();
    const pending = fs
      .readdirSync(migrationsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !applied.has(entry.name))
      .map((entry) => entry.name)
      .sort();
    for (const name of pending) {
      const sql = fs.readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8");
      await connection.apply(name, sql, createHash("sha256").update(sql).digest("hex"));
    }
    return pending;
  } finally {
    await connection.close();
  }
}

const APPLIED_NAMES = `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;

/** How long a writer waits for the lock before SQLITE_BUSY; covers a concurrent CLI or second bridge. */
const BUSY_TIMEOUT_MS = 5_000;

function openSqlite(file: string): MigrationConnection {
  const db = new Database(file);
  // WAL lets readers and the single writer proceed together; it persists in the file.
  db.pragma("journal_mode = WAL");
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return {
    async applied() {
      db.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
        "id" TEXT PRIMARY KEY NOT NULL,
        "checksum" TEXT NOT NULL,
        "finished_at" DATETIME,
        "migration_name" TEXT NOT NULL,
        "logs" TEXT,
        "rolled_back_at" DATETIME,
        "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
        "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0
      )`);
      const rows = db.prepare(APPLIED_NAMES).all() as { migration_name: string }[];
      return new Set(rows.map((row) => row.migration_name));
    },
    async apply(name, sql, checksum) {
      db.transaction(() => {
        db.exec(sql);
        db.prepare(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES (?, ?, current_timestamp, ?, 1)`,
        ).run(randomUUID(), checksum, name);
      })();
    },
    async close() {
      db.close();
    },
  };
}

/** Any constant shared by every Worldline process: advisory locks are per database. */
const MIGRATION_LOCK = 0x776c_6d69; // "wlmi"

/**
 * Several bridges starting at once serialize on an advisory lock, held for the whole connection
 * (ending it releases the lock), so each migration runs once.
 */
async function openPostgres(url: string): Promise<MigrationConnection> {
  // Loaded only here: the driver costs start-up time that SQLite users never need.
  const { default: pgModule } = await import("pg");
  const client = await connectCreating(pgModule, url);
  return {
    async applied() {
      await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL,
        "checksum" VARCHAR(64) NOT NULL,
        "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL,
        "logs" TEXT,
        "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
        "applied_steps_count" INTEGER NOT NULL DEFAULT 0
      )`);
      const { rows } = await client.query<{ migration_name: string }>(APPLIED_NAMES);
      return new Set(rows.map((row) => row.migration_name));
    },
    async apply(name, sql, checksum) {
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
    },
    close: () => client.end(),
  };
}

/**
 * A connection to the URL's database, creating the database first when it does not exist (as
 * `prisma migrate deploy` does), so a fresh server needs no manual step. Two processes creating
 * it at once are fine: the loser sees it exists.
 */
async function connectCreating(pgModule: typeof pg, url: string): Promise<pg.Client> {
  try {
    return await connect(pgModule, url);
  } catch (error) {
    if ((error as { code?: string }).code !== "3D000") throw error;
  }
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = await connect(pgModule, admin.toString());
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${pgModule.escapeIdentifier(name)}`);
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
  return connect(pgModule, url);
}

async function connect(pgModule: typeof pg, url: string): Promise<pg.Client> {
  const client = new pgModule.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {}); // the connection error below is the one to report
    throw error;
  }
  return client;
}
