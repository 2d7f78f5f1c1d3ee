import type { Db } from "./db";
import { isUniqueViolation } from "./dialect";

/** Web Push (server/notify): devices, deliveries claimed once, action tokens, focused tabs. */

export type PushSubscriptionRow = NonNullable<Awaited<ReturnType<typeof listPushSubscriptions>>>[number];

/** A device's subscription; the same endpoint again (a tab that subscribes anew) replaces it. */
export function savePushSubscription(
  db: Db,
  input: { owner: string; endpoint: string; p256dh: string; auth: string; device: string },
) {
  return db.pushSubscription.upsert({ where: { endpoint: input.endpoint }, create: input, update: input });
}

/** Every subscription, or one owner's. */
export function listPushSubscriptions(db: Db, owner?: string) {
  return db.pushSubscription.findMany({ where: owner ? { owner } : {}, orderBy: { createdAt: "asc" } });
}

/** Removes a subscription by endpoint (of one owner when given); false when there was none. */
export async function deletePushSubscription(db: Db, endpoint: string, owner?: string): Promise<boolean> {
  const { count } = await db.pushSubscription.deleteMany({ where: { endpoint, ...(owner ? { owner } : {}) } });
  return count > 0;
}

/** True for the first caller only: one notice per event and target across every bridge of a deployment. */
export async function claimDelivery(db: Db, eventKey: string, target: string): Promise<boolean> {
  try {
    await db.pushDelivery.create({ data: { eventKey, target } });
    return true;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

export function pruneDeliveries(db: Db, before: Date) {
  return db.pushDelivery.deleteMany({ where: { createdAt: { lt: before } } });
}

export function createActionToken(
  db: Db,
  input: { tokenHash: string; approvalId: string; decidedBy: string; expiresAt: Date },
) {
  return db.actionToken.create({ data: input });
}

/**
 * Uses an action token for one approval: one conditional update, so it works once, only for its
 * approval and only before it expires. Returns who the decision is recorded as, or null.
 */
export async function useActionToken(db: Db, tokenHash: string, approvalId: string): Promise<string | null> {
  const now = new Date();
  const { count } = await db.actionToken.updateMany({
    where: { tokenHash, approvalId, usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  if (count !== 1) return null;
  return (await db.actionToken.findUnique({ where: { tokenHash } }))?.decidedBy ?? null;
}

export function pruneActionTokens(db: Db, before: Date) {
  return db.actionToken.deleteMany({ where: { expiresAt: { lt: before } } });
}

/** A tab shows the session focused until `expiresAt` (it is refreshed while it does). */
export function putFocus(db: Db, input: { viewer: string; owner: string; sessionId: string; expiresAt: Date }) {
  return db.pushFocus.upsert({ where: { viewer: input.viewer }, create: input, update: input });
}

export function deleteFocus(db: Db, viewer: string) {
  return db.pushFocus.deleteMany({ where: { viewer } });
}

/** The owners with a tab that shows the session focused now. */
export async function focusedOwners(db: Db, sessionId: string): Promise<Set<string>> {
  const rows = await db.pushFocus.findMany({
    where: { sessionId, expiresAt: { gt: new Date() } },
    select: { owner: true },
  });
  return new Set(rows.map((row) => row.owner));
}

export function refreshFocus(db: Db, viewers: string[], expiresAt: Date) {
  return db.pushFocus.updateMany({ where: { viewer: { in: viewers } }, data: { expiresAt } });
}

export function pruneFocus(db: Db, before: Date) {
  return db.pushFocus.deleteMany({ where: { expiresAt: { lt: before } } });
}

/** Stores `value` under `key` unless a value is there already; returns the one stored (the first writer's). */
export async function settingOnce(db: Db, key: string, value: unknown): Promise<unknown> {
  try {
    await db.setting.create({ data: { key, value: JSON.stringify(value) } });
    return value;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const row = await db.setting.findUnique({ where: { key } });
    return row ? JSON.parse(row.value) : value;
  }
}
