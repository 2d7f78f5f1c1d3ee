import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/**
 * Applies prisma/migrations/*\/migration.sql in order, recording them in Prisma's own
 * `_prisma_migrations` table (same columns and checksum), so `prisma migrate deploy`
 * and this function agree on what is applied. Done in-process because spawning the
 * Prisma CLI costs seconds on every start.
 */
export function applyMigrations(databaseFile: string, migrationsDir: string): string[] {
  const db = new Database(databaseFile);
  try {
    // WAL lets readers and the single writer proceed together; it persists in the file.
    db.pragma("journal_mode = WAL");
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
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
    const applied = new Set(
      db
        .prepare(
          `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        )
        .all()
        .map((row) => (row as { migration_name: string }).migration_name),
    );
    const pending = fs
      .readdirSync(migrationsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !applied.has(entry.name))
      .map((entry) => entry.name)
      .sort();
    for (const name of pending) {
      const sql = fs.readFileSync(path.join(migrationsDir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      db.transaction(() => {
        db.exec(sql);
        db.prepare(
          `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES (?, ?, current_timestamp, ?, 1)`,
        ).run(randomUUID(), checksum, name);
      })();
    }
    return pending;
  } finally {
    db.close();
  }
}

/** How long a writer waits for the lock before SQLITE_BUSY; covers a concurrent CLI or second bridge. */
const BUSY_TIMEOUT_MS = 5_000;
