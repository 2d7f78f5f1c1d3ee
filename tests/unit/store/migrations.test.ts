import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { applyMigrations } from "../../../server/store/migrate";
import { openDb } from "../../../server/store";
import { dropTestDatabases, TEST_POSTGRES, testDatabaseUrl } from "../../db";

/**
 * The migrations of each provider, applied in order to an empty database, give the tables the
 * schema describes (compared with the schema's own CREATE script from `prisma migrate diff`).
 * Catches a migration made from a stale schema, e.g. a SQLite table rebuild that drops the
 * columns another migration added (prisma/README.md).
 */
const root = path.resolve(import.meta.dirname, "../../..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "wl-migrations-"));

afterAll(async () => {
  await dropTestDatabases();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function createScript(schema: string, config?: string): string {
  const args = ["migrate", "diff", "--from-empty", "--to-schema-datamodel", schema, "--script"];
  return execFileSync(path.join(root, "node_modules/.bin/prisma"), config ? ["--config", config, ...args] : args, {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
}

function sqliteShape(file: string): unknown {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name != '_prisma_migrations' ORDER BY name",
      )
      .all() as { name: string }[];
    return tables.map(({ name }) => ({
      name,
      // By name, without positions: ADD COLUMN appends, a CREATE TABLE lists them in schema order.
      columns: (db.pragma(`table_info("${name}")`) as { name: string; cid?: number }[])
        .map(({ cid: _cid, ...column }) => column)
        .sort((a, b) => a.name.localeCompare(b.name)),
      indexes: (db.pragma(`index_list("${name}")`) as { name: string; unique: number }[])
        .map((index) => ({
          ...index,
          seq: 0,
          columns: (db.pragma(`index_info("${index.name}")`) as { name: string }[]).map((column) => column.name),
        }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      foreignKeys: db.pragma(`foreign_key_list("${name}")`),
    }));
  } finally {
    db.close();
  }
}

async function postgresShape(url: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columns = await client.query(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name != '_prisma_migrations' ORDER BY table_name, column_name`,
    );
    const indexes = await client.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename != '_prisma_migrations' ORDER BY indexname`,
    );
    const constraints = await client.query(
      `SELECT conrelid::regclass::text AS "table", conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text != '_prisma_migrations' ORDER BY conname`,
    );
    return { columns: columns.rows, indexes: indexes.rows, constraints: constraints.rows };
  } finally {
    await client.end();
  }
}

describe("prisma: migrations give the schema's tables", () => {
  it("on SQLite", async () => {
    const migrated = path.join(tmp, "migrated.db");
    const created = path.join(tmp, "created.db");
    await applyMigrations({ provider: "sqlite", file: migrated }, path.join(root, "prisma/migrations"));
    const db = new Database(created);
    db.exec(createScript("prisma/schema.prisma"));
    db.close();
    expect(sqliteShape(migrated)).toStrictEqual(sqliteShape(created));
  }, 60_000);

  it.skipIf(!TEST_POSTGRES)(
    "on PostgreSQL",
    async () => {
      const migrated = testDatabaseUrl(path.join(tmp, "migrated"));
      const created = testDatabaseUrl(path.join(tmp, "created"));
      await applyMigrations({ provider: "postgresql", url: migrated }, path.join(root, "prisma/postgres/migrations"));
      // An empty migrations folder: the migrator only creates the database.
      fs.mkdirSync(path.join(tmp, "none"));
      await applyMigrations({ provider: "postgresql", url: created }, path.join(tmp, "none"));
      const client = new pg.Client({ connectionString: created });
      await client.connect();
      await client.query(createScript("prisma/postgres/schema.prisma", "prisma/postgres/prisma.config.ts"));
      await client.end();
      expect(await postgresShape(migrated)).toStrictEqual(await postgresShape(created));
    },
    60_000,
  );

  it.skipIf(!TEST_POSTGRES)(
    "bridges opening a new PostgreSQL database at once create it and migrate it once",
    async () => {
      const home = path.join(tmp, "together");
      const opened = await Promise.all([1, 2, 3].map(() => openDb(home, testDatabaseUrl(home))));
      const applied = opened.flatMap((result) => result.migrated).sort();
      const names = fs
        .readdirSync(path.join(root, "prisma/postgres/migrations"), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
      expect(applied).toEqual(names);
      const rows = await opened[0].db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM "_prisma_migrations"`;
      expect(rows[0].n).toBe(names.length);
      await Promise.all(opened.map((result) => result.db.$disconnect()));
    },
    60_000,
  );
});
