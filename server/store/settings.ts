import type { Db } from "./db";

/** Raw, like putSetting: settings are read on the way to a turn's first token (memory, prices, the baseline). */
export async function getSetting(db: Db, key: string): Promise<unknown> {
  const [row] = await db.$queryRaw<{ value: string }[]>`SELECT "value" FROM "Setting" WHERE "key" = ${key}`;
  return row ? JSON.parse(row.value) : undefined;
}

/** Raw, storing what upsert stores (tests/unit/store compares them): a baseline is written at every agent step. */
export async function putSetting(db: Db, key: string, value: unknown) {
  const json = JSON.stringify(value);
  await db.$executeRaw`
    INSERT INTO "Setting" ("key", "value", "updatedAt") VALUES (${key}, ${json}, ${new Date()})
    ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value", "updatedAt" = excluded."updatedAt"`;
}
