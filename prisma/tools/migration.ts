/**
 * `npm run db:migration <name>`: one schema change, one migration for each provider.
 *
 * Diffs prisma/migrations/migrated.prisma (the source schema as of the last migration) against
 * prisma/schema.prisma, writes the SQL for SQLite and for PostgreSQL under the same folder name,
 * rewrites the PostgreSQL twin, records the new migrated schema and regenerates both clients.
 * `npm run db:migration` without a name only rewrites the twin and regenerates (no migration).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  MIGRATED_SCHEMA,
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA,
  SQLITE_MIGRATIONS,
  SQLITE_SCHEMA,
  postgresTwin,
} from "./twin";

const root = path.resolve(import.meta.dirname, "../..");
const POSTGRES_CONFIG = "prisma/postgres/prisma.config.ts";
const EMPTY = "-- This is an empty migration.";

function prisma(args: string[]): string {
  return execFileSync(path.join(root, "node_modules/.bin/prisma"), args, {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
}

function diff(from: string, to: string, config?: string): string {
  const args = ["migrate", "diff", "--from-schema-datamodel", from, "--to-schema-datamodel", to, "--script"];
  return prisma(config ? ["--config", config, ...args] : args).trim();
}

/** 20261123194500: UTC, second precision, as Prisma names migrations. */
function stamp(date = new Date()): string {
  return date.toISOString().replace(/\D/g, "").slice(0, 14);
}

function main(): void {
  const name = process.argv[2];
  if (name !== undefined && !/^[a-z0-9_]+$/.test(name)) {
    throw new Error(`migration name "${name}": use lower case letters, digits and _`);
  }
  const source = fs.readFileSync(path.join(root, SQLITE_SCHEMA), "utf8");
  const twin = postgresTwin(source);
  fs.writeFileSync(path.join(root, POSTGRES_SCHEMA), twin);

  if (name !== undefined) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "wl-migration-"));
    try {
      const previous = fs.readFileSync(path.join(root, MIGRATED_SCHEMA), "utf8");
      fs.writeFileSync(path.join(tmp, "sqlite.prisma"), previous);
      fs.writeFileSync(path.join(tmp, "postgres.prisma"), postgresTwin(previous));
      const sqlite = diff(path.join(tmp, "sqlite.prisma"), SQLITE_SCHEMA);
      const postgres = diff(path.join(tmp, "postgres.prisma"), POSTGRES_SCHEMA, POSTGRES_CONFIG);
      if (sqlite === EMPTY && postgres === EMPTY) {
        console.log("prisma/schema.prisma has no change since the last migration: nothing to write.");
      } else {
        const folder = `${stamp()}_${name}`;
        for (const [dir, sql] of [
          [SQLITE_MIGRATIONS, sqlite],
          [POSTGRES_MIGRATIONS, postgres],
        ]) {
          fs.mkdirSync(path.join(root, dir, folder), { recursive: true });
          fs.writeFileSync(path.join(root, dir, folder, "migration.sql"), `${sql}\n`);
          console.log(`wrote ${dir}/${folder}/migration.sql`);
        }
        fs.writeFileSync(path.join(root, MIGRATED_SCHEMA), source);
        if (sqlite.includes("-- RedefineTables")) {
          console.warn(
            `\nWARNING: the SQLite migration rebuilds a table, copying only the columns migrated.prisma knows: a column\n` +
              `another pending migration adds would be lost. If your change only adds columns, replace the rebuild with\n` +
              `ALTER TABLE "T" ADD COLUMN … lines (as the PostgreSQL migration does); tests/unit/store/migrations.test.ts checks.\n`,
          );
        }
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  prisma(["generate"]);
  prisma(["generate", "--config", POSTGRES_CONFIG]);
  console.log("generated both clients (server/store/generated/prisma and server/store/generated/postgres)");
}

main();
