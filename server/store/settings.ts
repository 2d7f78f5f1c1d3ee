import type { Db } from "./db";

export async function getSetting(db: Db, key: string): Promise<unknown> {
  const row = await db.setting.findUnique({ where: { key }, select: { value: true } });
  return row ? JSON.parse(row.value) : undefined;
}

export async function putSetting(db: Db, key: string, value: unknown) {
  const json = JSON.stringify(value);
  await db.setting.upsert({ where: { key }, create: { key, value: json }, update: { value: json } });
}
