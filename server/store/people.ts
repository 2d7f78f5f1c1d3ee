import type { Db } from "./db";

/** Named people, their sign-in identities, personal API tokens, browser sessions and session access (server/people). */

export type UserRow = NonNullable<Awaited<ReturnType<typeof findUserByName>>>;
export type ApiTokenRow = Awaited<ReturnType<typeof createApiToken>>;

export async function countUsers(db: Db): Promise<number> {
  return db.user.count();
}

export async function createUser(
  db: Db,
  data: {
    name: string;
    role: string;
    passwordHash?: string | null;
    displayName?: string | null;
    email?: string | null;
  },
) {
  return db.user.create({ data });
}

export async function findUserByName(db: Db, name: string) {
  return db.user.findUnique({ where: { name } });
}

export async function findUserById(db: Db, id: string) {
  return db.user.findUnique({ where: { id } });
}

export async function findUserByEmail(db: Db, email: string) {
  return db.user.findFirst({ where: { email }, orderBy: { createdAt: "asc" } });
}

export async function listUsers(db: Db) {
  return db.user.findMany({ orderBy: { createdAt: "asc" } });
}

export async function updateUser(
  db: Db,
  id: string,
  data: {
    role?: string;
    passwordHash?: string | null;
    disabledAt?: Date | null;
    displayName?: string | null;
    budgetUsd?: number | null;
  },
) {
  return db.user.update({ where: { id }, data });
}

/** A person's daily budget in USD (server/budgets); null when they have none or are not a person. */
export async function userBudget(db: Db, id: string) {
  return db.user.findUnique({ where: { id }, select: { budgetUsd: true } });
}

export async function findIdentity(db: Db, issuer: string, subject: string) {
  return db.identity.findUnique({ where: { issuer_subject: { issuer, subject } }, include: { user: true } });
}

export async function createIdentity(
  db: Db,
  data: { userId: string; issuer: string; subject: string; email?: string | null },
) {
  return db.identity.create({ data });
}

export async function createApiToken(
  db: Db,
  data: { userId: string; name: string; tokenHash: string; expiresAt?: Date | null },
) {
  return db.apiToken.create({ data });
}

export async function findApiTokenByHash(db: Db, tokenHash: string) {
  return db.apiToken.findUnique({ where: { tokenHash }, include: { user: true } });
}

export async function listApiTokens(db: Db, userId: string) {
  return db.apiToken.findMany({ where: { userId }, orderBy: { createdAt: "desc" } });
}

/** Marks a person's token revoked (idempotent); null when the person has no such token. */
export async function revokeApiToken(db: Db, userId: string, id: string) {
  const token = await db.apiToken.findFirst({ where: { id, userId } });
  if (!token) return null;
  if (token.revokedAt) return token;
  return db.apiToken.update({ where: { id }, data: { revokedAt: new Date() } });
}

export async function touchApiToken(db: Db, id: string, at: Date): Promise<void> {
  await db.apiToken.update({ where: { id }, data: { lastUsedAt: at } });
}

export async function createAuthSession(
  db: Db,
  data: { userId: string; tokenHash: string; method: string; expiresAt: Date },
) {
  return db.authSession.create({ data });
}

export async function findAuthSessionByHash(db: Db, tokenHash: string) {
  return db.authSession.findUnique({ where: { tokenHash }, include: { user: true } });
}

export async function revokeAuthSession(db: Db, tokenHash: string): Promise<void> {
  await db.authSession.updateMany({ where: { tokenHash, revokedAt: null }, data: { revokedAt: new Date() } });
}

/** Ends every browser session of a person (disabled, or role changed to less). */
export async function revokeAuthSessionsOf(db: Db, userId: string): Promise<void> {
  await db.authSession.updateMany({ where: { userId, revokedAt: null }, data: { revokedAt: new Date() } });
}

export async function sessionAccessOf(db: Db, sessionId: string) {
  return db.sessionAccess.findMany({ where: { sessionId }, orderBy: { createdAt: "asc" } });
}

/** The person who owns a session (null: nobody, e.g. the launch token's sessions). */
export async function sessionOwnerOf(db: Db, sessionId: string): Promise<string | null> {
  return (await db.sessionAccess.findFirst({ where: { sessionId, access: "owner" } }))?.subject ?? null;
}

/** The rows that name one person (or everyone) on one session. */
export async function sessionAccessFor(db: Db, sessionId: string, subjects: string[]) {
  return db.sessionAccess.findMany({ where: { sessionId, subject: { in: subjects } } });
}

/** Ids of the sessions a person (or everyone) has any access to. */
export async function sessionIdsFor(db: Db, subjects: string[]): Promise<string[]> {
  const rows = await db.sessionAccess.findMany({ where: { subject: { in: subjects } }, select: { sessionId: true } });
  return [...new Set(rows.map((row) => row.sessionId))];
}

export async function putSessionAccess(db: Db, sessionId: string, subject: string, access: string): Promise<void> {
  await db.sessionAccess.upsert({
    where: { sessionId_subject: { sessionId, subject } },
    create: { sessionId, subject, access },
    update: { access },
  });
}

export async function deleteSessionAccess(db: Db, sessionId: string, subject: string): Promise<boolean> {
  const { count } = await db.sessionAccess.deleteMany({ where: { sessionId, subject } });
  return count > 0;
}

/**
 * Counts one password attempt for a name, before it is checked, and returns the count in the
 * current window (this one included). An attempt after the window started over begins a new one.
 * The increment is one statement (an upsert), so attempts at once, on any bridge, each get their own number.
 */
export async function countSignInAttempt(db: Db, name: string, windowStart: Date): Promise<number> {
  const now = new Date();
  await db.signInAttempt.updateMany({ where: { name, since: { lt: windowStart } }, data: { count: 0, since: now } });
  const row = await db.signInAttempt.upsert({
    where: { name },
    create: { name, count: 1, since: now },
    update: { count: { increment: 1 } },
  });
  return row.count;
}

/** A right password: the name's count starts over. */
export async function clearSignInAttempts(db: Db, name: string): Promise<void> {
  await db.signInAttempt.deleteMany({ where: { name } });
}

/** Forgets the counts of windows that started before `before` (names tried once, long ago). */
export async function pruneSignInAttempts(db: Db, before: Date): Promise<void> {
  await db.signInAttempt.deleteMany({ where: { since: { lt: before } } });
}
