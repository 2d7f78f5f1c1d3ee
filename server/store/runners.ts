import { WorldlineError } from "../errors";
import type { Db } from "./db";
import { isUniqueViolation } from "./dialect";

export type RunnerRow = NonNullable<Awaited<ReturnType<typeof getRunner>>>;

export function getRunner(db: Db, name: string) {
  return db.runner.findUnique({ where: { name } });
}

export function listRunners(db: Db) {
  return db.runner.findMany({ where: { revokedAt: null }, orderBy: { name: "asc" } });
}

/**
 * A new runner, or a new enrollment token for an existing (or revoked) one: its credential
 * stays valid until the token is exchanged, and is replaced then.
 */
export function addRunner(
  db: Db,
  input: { name: string; enrollHash: string; enrollExpiresAt: Date; allowedRoots: string[] },
) {
  const data = {
    enrollHash: input.enrollHash,
    enrollExpiresAt: input.enrollExpiresAt,
    allowedRoots: JSON.stringify(input.allowedRoots),
    revokedAt: null,
  };
  return db.runner.upsert({ where: { name: input.name }, create: { name: input.name, ...data }, update: data });
}

export function findRunnerByEnrollHash(db: Db, enrollHash: string) {
  return db.runner.findUnique({ where: { enrollHash } });
}

/** The runner whose current credential this is, or whose previous one (a runner that missed the welcome carrying its new one). */
export function findRunnerByCredentialHash(db: Db, credentialHash: string) {
  return db.runner.findFirst({
    where: { OR: [{ credentialHash }, { previousCredentialHash: credentialHash }] },
  });
}

/**
 * Replaces the credential a runner connected with by a new one; the one it presented stays valid
 * until the new one is first used. False when another connection rotated it meanwhile.
 */
export async function rotateCredential(db: Db, id: string, presentedHash: string, credentialHash: string) {
  const { count } = await db.runner.updateMany({
    where: { id, revokedAt: null, OR: [{ credentialHash: presentedHash }, { previousCredentialHash: presentedHash }] },
    data: { credentialHash, previousCredentialHash: presentedHash },
  });
  return count === 1;
}

/** A second connection with the runner's credential was refused while it was connected: shown to admins. */
export function markDuplicate(db: Db, name: string) {
  return db.runner.updateMany({ where: { name }, data: { duplicateAt: new Date() } });
}

/** Who may use the runner (JSON `{roles?, people?}`); false when there is no such runner. */
export async function setRunnerAccess(db: Db, name: string, access: string): Promise<boolean> {
  const { count } = await db.runner.updateMany({ where: { name, revokedAt: null }, data: { access } });
  return count === 1;
}

/** Swaps the one-time token for the credential; false when the token was used (or replaced) meanwhile. */
export async function exchangeEnrollment(db: Db, id: string, enrollHash: string, credentialHash: string) {
  const { count } = await db.runner.updateMany({
    where: { id, enrollHash, revokedAt: null },
    data: { enrollHash: null, enrollExpiresAt: null, credentialHash, previousCredentialHash: null },
  });
  return count === 1;
}

export function touchRunner(db: Db, name: string, data: { roots?: string[]; lastSeenAt: Date }) {
  return db.runner.updateMany({
    where: { name },
    data: { lastSeenAt: data.lastSeenAt, ...(data.roots ? { roots: JSON.stringify(data.roots) } : {}) },
  });
}

/** Revokes a runner: its credential and any pending token stop working. False when there is no such runner. */
export async function revokeRunner(db: Db, name: string): Promise<boolean> {
  const { count } = await db.runner.updateMany({
    where: { name, revokedAt: null },
    data: {
      revokedAt: new Date(),
      credentialHash: null,
      previousCredentialHash: null,
      enrollHash: null,
      enrollExpiresAt: null,
    },
  });
  return count === 1;
}

/**
 * Renames a runner and the sessions on it, in one transaction. False when there is no such
 * (unrevoked) runner; `runner:invalid` when the new name is taken (a revoked runner keeps its name).
 */
export async function renameRunner(db: Db, from: string, to: string): Promise<boolean> {
  const taken = () => new WorldlineError("runner:invalid", `A runner named "${to}" exists already.`);
  if (from === to) {
    if (await getRunner(db, to)) throw taken();
    return false;
  }
  try {
    // The write comes first: on SQLite a transaction that read first cannot take the write lock
    // once another process (a bridge) wrote since (SQLITE_BUSY, which no retry of the statement helps).
    return await db.$transaction(async (tx) => {
      const { count } = await tx.runner.updateMany({ where: { name: from, revokedAt: null }, data: { name: to } });
      if (count === 1) await tx.session.updateMany({ where: { runner: from }, data: { runner: to } });
      return count === 1;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
}
