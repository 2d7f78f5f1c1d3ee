import path from "node:path";
import { makeHome } from "../config/home";
import { ROOT_DIR } from "../config/root";
import { PrismaClient } from "./generated/prisma/client";
import { applyMigrations } from "./migrate";
import { withPlanCache } from "./plan-cache";
import { sqliteAdapter } from "./sqlite-adapter";

/**
 * The client's type is the SQLite one's; a PostgreSQL client is the same model (prisma/README.md,
 * and a unit test compares the two generated models), so it is used through the same type.
 */
export type Db = PrismaClient;
export type Provider = "sqlite" | "postgresql";

const PRISMA_DIR = path.join(ROOT_DIR, "prisma");
const providers = new WeakMap<Db, Provider>();

/** Which database a client talks to, for the few statements that differ (see server/store/dialect.ts). */
export function providerOf(db: Db): Provider {
  return providers.get(db) ?? "sqlite";
}

/**
 * Opens (creating and migrating) the database: PostgreSQL when `databaseUrl` is a postgres URL
 * (DATABASE_URL), otherwise the SQLite file under the data dir, the embedded default.
 */
export async function openDb(
  home: string,
  databaseUrl?: string,
): Promise<{ db: Db; provider: Provider; file: string | null; migrated: string[] }> {
  makeHome(home);
  if (databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
      throw new Error("DATABASE_URL must be a postgresql:// URL (unset it to use SQLite in WORLDLINE_HOME)");
    }
    // Loaded only here: the PostgreSQL client, adapter and driver cost start-up ~100 ms that SQLite users never need.
    const [{ postgresAdapter }, { PrismaClient: PostgresClient }] = await Promise.all([
      import("./postgres-adapter"),
      import("./generated/postgres/client"),
    ]);
    const migrated = await applyMigrations(
      { provider: "postgresql", url: databaseUrl },
      path.join(PRISMA_DIR, "postgres/migrations"),
    );
    const client = new PostgresClient(withPlanCache({ adapter: postgresAdapter(databaseUrl) }));
    const db = client as unknown as Db;
    providers.set(db, "postgresql");
    await db.$connect();
    return { db, provider: "postgresql", file: null, migrated };
  }
  const file = path.join(home, "worldline.db");
  const migrated = await applyMigrations({ provider: "sqlite", file }, path.join(PRISMA_DIR, "migrations"));
  const db = new PrismaClient(withPlanCache({ adapter: sqliteAdapter(file) }));
  providers.set(db, "sqlite");
  await db.$connect();
  return { db, provider: "sqlite", file, migrated };
}
