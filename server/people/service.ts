import { createHash, randomBytes } from "node:crypto";
import {
  RESERVED_USER_NAMES,
  type ApiTokenView,
  type CreatedApiToken,
  type MyBudgetView,
  type Role,
  type SessionAccessView,
  type ShareScope,
  type UserView,
} from "../protocol";
import { personBudgetToday } from "../budgets";
import { WorldlineError } from "../errors";
import * as store from "../store";
import { effectiveLevel, higherLevel, type Level } from "./policy";
import { Credentials, type Credential } from "./credentials";
import { generatePassword, hashPassword, verifyPassword } from "./passwords";

/** A signed-in person as the transport sees them. */
export interface Person {
  id: string;
  name: string;
  displayName: string | null;
  role: Role;
}

/** A person and the credential they came with (a personal API token or a sign-in cookie). */
export interface PersonCredential {
  person: Person;
  credential: Extract<Credential, { kind: "api_token" | "sign_in" }>;
}

/** Personal API tokens and sign-in cookies are recognisable, and never mistaken for the launch token or a share link. */
const API_TOKEN_PREFIX = "wlp_";
const SIGN_IN_PREFIX = "wlc_";
const TOKEN_BYTES = 32;
/** A browser stays signed in this long (absolute; signing in again starts a new one). */
export const SIGN_IN_LIFETIME_MS = 14 * 24 * 3600 * 1000;
/**
 * A person's role and access rows are re-read at most this often per session: socket packets
 * (every keystroke of a terminal) are checked without a query each, and a revoked share or a
 * changed role still applies within this.
 */
const ACCESS_CACHE_MS = 2_000;
/**
 * Password guessing: each attempt for a name is counted in the store before its password is checked
 * (so guesses sent at once, or to several bridges, cannot all be checked); past this many in the
 * window, that name's sign-in is refused unchecked until the window has passed.
 */
const MAX_FAILED_SIGN_INS = 10;
const FAILED_SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** Counts of windows long over are deleted at most this often (names tried once stay a row until then). */
const PRUNE_ATTEMPTS_MS = 60_000;
/** `lastUsedAt` of an API token is written at most this often. */
const TOKEN_TOUCH_MS = 60_000;
const EVERYONE = "*";

/**
 * Named people on a hub (README, "Runners and people"): accounts with roles, password and OpenID Connect
 * sign-in, personal API tokens, and who may reach which session. Only hashes of secrets are
 * stored (argon2id for passwords, SHA-256 for random tokens), so the database alone signs
 * nobody in.
 */
export class People {
  private hasPeople = false;
  private readonly levels = new Map<string, { level: Level | null; at: number }>();
  private readonly users = new Map<string, { person: Person | null; at: number }>();
  private prunedAt = 0;

  /** Told whenever a credential ends (server/people/credentials.ts); sockets listen to it. */
  readonly credentials: Credentials;

  constructor(
    private readonly db: store.Db,
    private readonly options: { oidc: boolean; oidcDefaultRole: Role; credentials?: Credentials },
  ) {
    this.credentials = options.credentials ?? new Credentials();
    // Before any socket listener: a check made after an event reads the rows again, here and on other bridges.
    this.credentials.on((event) => {
      if (event.kind === "person") this.forgetCached(event.personId);
      else if (event.kind === "access") this.levels.clear();
    });
  }

  /** A hub: OpenID Connect is configured or someone has an account. Without either, single-token mode stands. */
  async enabled(): Promise<boolean> {
    // Once a hub, always a hub for this process: people are never all deleted while it runs.
    if (this.hasPeople || this.options.oidc) return true;
    this.hasPeople = (await store.countUsers(this.db)) > 0;
    return this.hasPeople;
  }

  get oidcEnabled(): boolean {
    return this.options.oidc;
  }

  async addUser(input: {
    name: string;
    role: Role;
    password?: string;
    displayName?: string;
  }): Promise<{ user: UserView; password: string }> {
    const password = input.password ?? generatePassword();
    if (RESERVED_USER_NAMES.includes(input.name))
      throw new WorldlineError("people:invalid", `"${input.name}" means something else here; choose another name.`);
    if (await store.findUserByName(this.db, input.name))
      throw new WorldlineError("people:conflict", `There is already a person named "${input.name}".`);
    const row = await store.createUser(this.db, {
      name: input.name,
      role: input.role,
      displayName: input.displayName ?? null,
      passwordHash: await hashPassword(password),
    });
    this.hasPeople = true;
    return { user: toUserView(row), password };
  }

  async listUsers(): Promise<UserView[]> {
    return (await store.listUsers(this.db)).map(toUserView);
  }

  async updateUser(
    name: string,
    patch: { role?: Role; password?: string; disabled?: boolean; budget_usd?: number | null },
  ): Promise<UserView> {
    const user = await this.userNamed(name);
    const row = await store.updateUser(this.db, user.id, {
      role: patch.role,
      passwordHash: patch.password === undefined ? undefined : await hashPassword(patch.password),
      disabledAt: patch.disabled === undefined ? undefined : patch.disabled ? new Date() : null,
      budgetUsd: patch.budget_usd,
    });
    // Less power or a new password: every signed-in browser of theirs signs in again, and every open socket
    // of theirs (API tokens included) is closed, so it reconnects with what they are now.
    const changed = patch.disabled || patch.password !== undefined || (patch.role && patch.role !== user.role);
    if (changed) await store.revokeAuthSessionsOf(this.db, user.id);
    this.forgetCached(user.id);
    if (changed) this.credentials.ended({ kind: "person", personId: user.id });
    return toUserView(row);
  }

  /** A person's daily budget today and what their sessions spent (GET /api/v1/me/budget). */
  async budgetToday(personId: string): Promise<MyBudgetView> {
    return personBudgetToday(this.db, personId);
  }

  /** A sign-in cookie's value for a name and password, or `auth:unauthorized` (the same for a wrong name or password). */
  async signInWithPassword(name: string, password: string): Promise<{ token: string; person: Person }> {
    const key = name.trim().toLowerCase();
    const windowStart = new Date(Date.now() - FAILED_SIGN_IN_WINDOW_MS);
    await this.pruneAttempts(windowStart);
    // Counted before it is checked: a burst of guesses gets MAX_FAILED_SIGN_INS checks, not one per guess.
    if ((await store.countSignInAttempt(this.db, key, windowStart)) > MAX_FAILED_SIGN_INS)
      throw new WorldlineError("auth:rate_limited", "Too many wrong passwords for this name; try again later.");
    const user = await store.findUserByName(this.db, key);
    const valid = await verifyPassword(user?.passwordHash ?? null, password);
    if (!user || !valid || user.disabledAt)
      throw new WorldlineError("auth:unauthorized", "Wrong name or password, or the account is disabled.");
    await store.clearSignInAttempts(this.db, key);
    return { token: await this.startSignIn(user.id, "password"), person: toPerson(user) };
  }

  /**
   * Signs in the person behind an OpenID Connect identity: the one it was linked to, else the
   * person with the same verified email (linked now), else a new person with the default role.
   */
  async signInWithIdentity(identity: {
    issuer: string;
    subject: string;
    email?: string;
    emailVerified?: boolean;
    preferredName?: string;
    displayName?: string;
  }): Promise<{ token: string; person: Person }> {
    const linked = await store.findIdentity(this.db, identity.issuer, identity.subject);
    let user = linked?.user ?? null;
    if (!user && identity.email && identity.emailVerified) {
      user = await store.findUserByEmail(this.db, identity.email.toLowerCase());
    }
    if (!user) {
      user = await store.createUser(this.db, {
        name: await this.freeName(identity.preferredName ?? identity.email?.split("@")[0] ?? "person"),
        role: this.options.oidcDefaultRole,
        email: identity.email?.toLowerCase() ?? null,
        displayName: identity.displayName ?? null,
      });
      this.hasPeople = true;
    }
    if (!linked) {
      await store.createIdentity(this.db, {
        userId: user.id,
        issuer: identity.issuer,
        subject: identity.subject,
        email: identity.email ?? null,
      });
    }
    if (user.disabledAt) throw new WorldlineError("auth:forbidden", "This account is disabled; ask an admin.");
    return { token: await this.startSignIn(user.id, "oidc"), person: toPerson(user) };
  }

  /** The person a sign-in cookie belongs to, if it is live. */
  async personOfSignIn(token: string | undefined): Promise<PersonCredential | null> {
    if (!token?.startsWith(SIGN_IN_PREFIX) || token.length > 200) return null;
    const row = await store.findAuthSessionByHash(this.db, hashSecret(token));
    if (!row || row.revokedAt || row.expiresAt.getTime() <= Date.now() || row.user.disabledAt) return null;
    return {
      person: toPerson(row.user),
      credential: { kind: "sign_in", id: row.id, personId: row.userId, expiresAt: row.expiresAt },
    };
  }

  async signOut(token: string | undefined): Promise<void> {
    if (!token?.startsWith(SIGN_IN_PREFIX)) return;
    const row = await store.findAuthSessionByHash(this.db, hashSecret(token));
    if (!row) return;
    await store.revokeAuthSession(this.db, row.tokenHash);
    this.credentials.ended({ kind: "sign_in", id: row.id });
  }

  async createApiToken(personId: string, input: { name: string; expiresInSeconds?: number }): Promise<CreatedApiToken> {
    const token = API_TOKEN_PREFIX + randomBytes(TOKEN_BYTES).toString("base64url");
    const row = await store.createApiToken(this.db, {
      userId: personId,
      name: input.name,
      tokenHash: hashSecret(token),
      expiresAt: input.expiresInSeconds ? new Date(Date.now() + input.expiresInSeconds * 1000) : null,
    });
    return { ...toTokenView(row), token };
  }

  async listApiTokens(personId: string): Promise<ApiTokenView[]> {
    return (await store.listApiTokens(this.db, personId)).map(toTokenView);
  }

  async revokeApiToken(personId: string, id: string): Promise<ApiTokenView> {
    const row = await store.revokeApiToken(this.db, personId, id);
    if (!row) throw new WorldlineError("people:not_found", `You have no API token "${id}".`);
    this.credentials.ended({ kind: "api_token", id: row.id });
    return toTokenView(row);
  }

  /** The person a personal API token (`Authorization: Bearer wlp_…`) belongs to, if it is live. */
  async personOfApiToken(token: string | undefined): Promise<PersonCredential | null> {
    if (!token?.startsWith(API_TOKEN_PREFIX) || token.length > 200) return null;
    const row = await store.findApiTokenByHash(this.db, hashSecret(token));
    if (!row || row.revokedAt || (row.expiresAt && row.expiresAt.getTime() <= Date.now()) || row.user.disabledAt)
      return null;
    const now = new Date();
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > TOKEN_TOUCH_MS) {
      // Bookkeeping only: a failed write must not refuse a valid token.
      await store.touchApiToken(this.db, row.id, now).catch(() => undefined);
    }
    return {
      person: toPerson(row.user),
      credential: { kind: "api_token", id: row.id, personId: row.userId, expiresAt: row.expiresAt },
    };
  }

  /** The person as they are now (role, disabled), re-read at most every ACCESS_CACHE_MS. */
  async current(personId: string): Promise<Person | null> {
    const cached = this.users.get(personId);
    if (cached && Date.now() - cached.at < ACCESS_CACHE_MS) return cached.person;
    const row = await store.findUserById(this.db, personId);
    const person = row && !row.disabledAt ? toPerson(row) : null;
    this.users.set(personId, { person, at: Date.now() });
    return person;
  }

  /** A person's level on a session (null: they may not see it), from their current role and the session's rows. */
  async levelOn(personId: string, sessionId: string): Promise<Level | null> {
    const person = await this.current(personId);
    if (!person) return null;
    const key = `${personId}\u0000${sessionId}`;
    const cached = this.levels.get(key);
    let granted: Level | null;
    if (cached && Date.now() - cached.at < ACCESS_CACHE_MS) granted = cached.level;
    else {
      const rows = await store.sessionAccessFor(this.db, sessionId, [personId, EVERYONE]);
      granted = rows.reduce<Level | null>((best, row) => higherLevel(best, asLevel(row.access)), null);
      this.levels.set(key, { level: granted, at: Date.now() });
    }
    return effectiveLevel(person.role, granted);
  }

  /** The sessions a person may see; null: all of them (admins). */
  async visibleSessionIds(person: Person): Promise<Set<string> | null> {
    if (person.role === "admin") return null;
    return new Set(await store.sessionIdsFor(this.db, [person.id, EVERYONE]));
  }

  /** The session an approval belongs to (null: no such approval). */
  async sessionOfApproval(approvalId: string): Promise<string | null> {
    return (await store.getApproval(this.db, approvalId))?.sessionId ?? null;
  }

  /** The session a task (a turn) belongs to (null: no such task). */
  async sessionOfTask(taskId: string): Promise<string | null> {
    return (await store.getTurn(this.db, taskId))?.sessionId ?? null;
  }

  /** A session created by a person is theirs. */
  async recordOwner(personId: string, sessionId: string): Promise<void> {
    await store.putSessionAccess(this.db, sessionId, personId, "owner");
    this.levels.delete(`${personId}\u0000${sessionId}`);
  }

  async listAccess(sessionId: string): Promise<SessionAccessView[]> {
    const rows = await store.sessionAccessOf(this.db, sessionId);
    const names = new Map((await store.listUsers(this.db)).map((user) => [user.id, user.name]));
    return rows.map((row) => ({
      subject: row.subject === EVERYONE ? "everyone" : (names.get(row.subject) ?? row.subject),
      access: asLevel(row.access),
    }));
  }

  /** Shares a session with a person (by name) or everyone; the owner's own row is never lowered. */
  async share(sessionId: string, subject: string, access: ShareScope): Promise<SessionAccessView[]> {
    const id = subject === "everyone" ? EVERYONE : (await this.userNamed(subject)).id;
    const existing = await store.sessionAccessFor(this.db, sessionId, [id]);
    if (existing[0]?.access === "owner")
      throw new WorldlineError("people:conflict", `${subject} owns this session already.`);
    await store.putSessionAccess(this.db, sessionId, id, access);
    this.levels.clear();
    // A share may lower someone's level (drive to view): their sockets on it are checked again.
    this.credentials.ended({ kind: "access", sessionId });
    return this.listAccess(sessionId);
  }

  async unshare(sessionId: string, subject: string): Promise<SessionAccessView[]> {
    const id = subject === "everyone" ? EVERYONE : (await this.userNamed(subject)).id;
    const existing = await store.sessionAccessFor(this.db, sessionId, [id]);
    if (existing[0]?.access === "owner")
      throw new WorldlineError("people:conflict", "The owner's access cannot be removed.");
    if (!(await store.deleteSessionAccess(this.db, sessionId, id)))
      throw new WorldlineError("people:not_found", `This session is not shared with ${subject}.`);
    this.levels.clear();
    this.credentials.ended({ kind: "access", sessionId });
    return this.listAccess(sessionId);
  }

  private async userNamed(name: string) {
    const user = await store.findUserByName(this.db, name.trim().toLowerCase());
    if (!user) throw new WorldlineError("people:not_found", `No person named "${name}".`);
    return user;
  }

  /** A sign-in name for a new OpenID Connect person: the provider's, made valid and unique. */
  private async freeName(wanted: string): Promise<string> {
    const base =
      wanted
        .toLowerCase()
        .replace(/[^a-z0-9._@-]/g, "")
        .replace(/^[^a-z0-9]+/, "")
        .slice(0, 56) || "person";
    for (let n = 1; ; n += 1) {
      const name = n === 1 ? base : `${base}-${n}`;
      // `everyone` from a provider would read as the access list's everyone.
      if (!RESERVED_USER_NAMES.includes(name) && !(await store.findUserByName(this.db, name))) return name;
    }
  }

  private async startSignIn(userId: string, method: "password" | "oidc"): Promise<string> {
    const token = SIGN_IN_PREFIX + randomBytes(TOKEN_BYTES).toString("base64url");
    await store.createAuthSession(this.db, {
      userId,
      tokenHash: hashSecret(token),
      method,
      expiresAt: new Date(Date.now() + SIGN_IN_LIFETIME_MS),
    });
    return token;
  }

  private async pruneAttempts(before: Date): Promise<void> {
    if (Date.now() - this.prunedAt < PRUNE_ATTEMPTS_MS) return;
    this.prunedAt = Date.now();
    await store.pruneSignInAttempts(this.db, before);
  }

  private forgetCached(personId: string): void {
    this.users.delete(personId);
    for (const key of this.levels.keys()) if (key.startsWith(`${personId}\u0000`)) this.levels.delete(key);
  }
}

function hashSecret(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function asLevel(access: string): Level {
  return access === "owner" || access === "drive" ? access : "view";
}

function asRole(role: string): Role {
  return role === "admin" || role === "member" ? role : "viewer";
}

function toPerson(row: store.UserRow): Person {
  return { id: row.id, name: row.name, displayName: row.displayName, role: asRole(row.role) };
}

function toUserView(row: store.UserRow): UserView {
  return {
    id: row.id,
    name: row.name,
    display_name: row.displayName,
    email: row.email,
    role: asRole(row.role),
    disabled: row.disabledAt !== null,
    has_password: row.passwordHash !== null,
    budget_usd: row.budgetUsd,
    created_at: row.createdAt.toISOString(),
  };
}

function toTokenView(row: store.ApiTokenRow): ApiTokenView {
  const active = !row.revokedAt && (!row.expiresAt || row.expiresAt.getTime() > Date.now());
  return {
    id: row.id,
    name: row.name,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    active,
  };
}
