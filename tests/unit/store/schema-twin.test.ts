import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  MIGRATED_SCHEMA,
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA,
  SQLITE_MIGRATIONS,
  SQLITE_SCHEMA,
  postgresTwin,
} from "../../../prisma/tools/twin";

const root = path.resolve(import.meta.dirname, "../../..");
const read = (file: string) => fs.readFileSync(path.join(root, file), "utf8");
const migrations = (dir: string) =>
  fs
    .readdirSync(path.join(root, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

/** The model a generated client runs on (fields, types, relations), as the generator embedded it. */
function runtimeModel(client: string): unknown {
  const text = read(`server/store/generated/${client}/internal/class.ts`);
  const match = /config\.runtimeDataModel = JSON\.parse\((".*")\)/.exec(text);
  if (!match) throw new Error(`no runtimeDataModel in the ${client} client`);
  return JSON.parse(JSON.parse(match[1]) as string);
}

describe("prisma: one schema, two providers (prisma/README.md)", () => {
  it("the PostgreSQL schema is the twin of prisma/schema.prisma (run `npm run db:migration`)", () => {
    expect(read(POSTGRES_SCHEMA)).toBe(postgresTwin(read(SQLITE_SCHEMA)));
  });

  it("both generated clients are the same model", () => {
    const sqlite = runtimeModel("prisma");
    expect(sqlite).toHaveProperty("models.Session");
    expect(runtimeModel("postgres")).toStrictEqual(sqlite);
  });

  it("every schema change has its migration, for both providers (run `npm run db:migration <name>`)", () => {
    expect(read(MIGRATED_SCHEMA)).toBe(read(SQLITE_SCHEMA));
    const names = migrations(SQLITE_MIGRATIONS);
    expect(names.length).toBeGreaterThan(0);
    expect(migrations(POSTGRES_MIGRATIONS)).toEqual(names);
    for (const name of names) {
      expect(name).toMatch(/^\d{14}_[a-z0-9_]+$/);
      expect(read(`${POSTGRES_MIGRATIONS}/${name}/migration.sql`).trim()).not.toBe("");
    }
  });

  it("refuses what one provider cannot read", () => {
    expect(() => postgresTwin(read(SQLITE_SCHEMA).replace("String   @id", "String   @id @db.Text"))).toThrow(
      /@db\.Text/,
    );
  });
});
