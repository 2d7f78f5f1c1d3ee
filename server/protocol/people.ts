import * as z from "zod";
import { ShareScope } from "./sync";

/** Named people on a hub (README, "Runners and people"): roles, sign-in, personal tokens, who may reach a session. */

export const Role = z.enum(["admin", "member", "viewer"]);
export type Role = z.infer<typeof Role>;

/** Sign-in names: what a person types, and what `decided_by` records. */
export const UserName = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9._@-]*$/, "use letters, digits and . _ @ - (starting with a letter or digit)");

/** argon2 hashes any length, but a megabyte "password" is a denial of service, not a secret. */
export const Password = z.string().min(8, "at least 8 characters").max(1024);

/**
 * Names no person may have: they mean something else where a name is expected (`everyone` in a
 * session's access list) or would pass for the hub itself in a decision's `decided_by`.
 */
export const RESERVED_USER_NAMES: readonly string[] = ["everyone", "default", "web", "http"];

/**
 * Where the browser goes after signing in: a path of this site, parsed as the browser will parse
 * it (`new URL` against the hub's origin), else `/`. Tabs and newlines (`/%09/evil.example`),
 * `//host`, `/\host`, `https://host` and a path that normalises to `//host` all land on `/`.
 */
export function sameOriginPath(next: string | null | undefined, origin: string): string {
  if (!next) return "/";
  let url: URL;
  try {
    url = new URL(next, origin);
  } catch {
    return "/"; // Not a URL at all.
  }
  if (url.origin !== new URL(origin).origin) return "/";
  // Written back as a path, `//host` would be read as another host.
  if (/^[/\\]{2}/.test(url.pathname)) return "/";
  return `${url.pathname}${url.search}${url.hash}`;
}

/** Why an OpenID Connect sign-in came back to `/signin?error=`: only these codes, each shown as its fixed text. */
export const SIGN_IN_ERRORS = {
  expired: "The sign-in took too long or was started elsewhere. Try again.",
  refused: "The identity provider did not sign you in.",
  unavailable: "The identity provider could not be reached. Try again later.",
  disabled: "This account is disabled; ask an admin.",
  failed: "Signing in failed. Try again, or ask an admin.",
} as const;
export type SignInErrorCode = keyof typeof SIGN_IN_ERRORS;

/** The text for `/signin?error=<code>`: an unknown code (any text someone put in a link) shows the general one. */
export function signInErrorText(code: string | null): string | null {
  if (!code) return null;
  return Object.hasOwn(SIGN_IN_ERRORS, code) ? SIGN_IN_ERRORS[code as SignInErrorCode] : SIGN_IN_ERRORS.failed;
}

export const LoginBody = z.object({ name: UserName, password: z.string().min(1).max(1024) }).strict();

export const CreateUserBody = z
  .object({ name: UserName, role: Role, password: Password.optional(), display_name: z.string().max(200).optional() })
  .strict();

/** A person's daily spend limit in USD over their sessions (server/budgets); null removes it. */
export const PersonBudgetUsd = z.number().finite().min(0).max(1_000_000).nullable();

export const UpdateUserBody = z
  .object({
    role: Role.optional(),
    password: Password.optional(),
    disabled: z.boolean().optional(),
    budget_usd: PersonBudgetUsd.optional(),
  })
  .strict();

export const CreateApiTokenBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    /** Seconds from now; omitted: the token lives until revoked. */
    expires_in: z
      .number()
      .int()
      .min(60)
      .max(366 * 24 * 3600)
      .optional(),
  })
  .strict();

/** Share a session with one person (by sign-in name) or with everyone signed in. */
export const PutSessionAccessBody = z
  .object({ subject: z.union([z.literal("everyone"), UserName]), access: ShareScope })
  .strict();

export const UserView = z.object({
  id: z.string(),
  name: z.string(),
  display_name: z.string().nullable(),
  email: z.string().nullable(),
  role: Role,
  disabled: z.boolean(),
  has_password: z.boolean(),
  /** Daily spend limit in USD over their sessions; null = none. */
  budget_usd: z.number().nullable(),
  created_at: z.string(),
});
export type UserView = z.infer<typeof UserView>;

/** A person just added: the generated password is shown once. */
export const CreatedUser = z.object({ user: UserView, password: z.string() });
export type CreatedUser = z.infer<typeof CreatedUser>;

export const ApiTokenView = z.object({
  id: z.string(),
  name: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  active: z.boolean(),
});
export type ApiTokenView = z.infer<typeof ApiTokenView>;

/** Only the creation answer carries the token; the hub keeps a hash. */
export const CreatedApiToken = ApiTokenView.extend({ token: z.string() });
export type CreatedApiToken = z.infer<typeof CreatedApiToken>;

export const SessionAccessView = z.object({
  /** "everyone", or a person's sign-in name. */
  subject: z.string(),
  access: z.enum(["owner", "drive", "view"]),
});
export type SessionAccessView = z.infer<typeof SessionAccessView>;

/**
 * GET /api/v1/me/budget: your daily budget today. `limit_usd` is the budget plus what allowing a
 * `budget` request added today; `spent_usd` what your sessions spent since midnight (the bridge's time
 * zone), every billed attempt, null when no step had a known price.
 */
export const MyBudgetView = z.object({
  budget_usd: z.number().nullable(),
  limit_usd: z.number().nullable(),
  spent_usd: z.number().nullable(),
});
export type MyBudgetView = z.infer<typeof MyBudgetView>;

/** GET /auth/options: what the sign-in page offers. */
export const SignInOptions = z.object({ oidc: z.boolean(), password: z.boolean() });
export type SignInOptions = z.infer<typeof SignInOptions>;

/** GET /api/v1/me: who the request is. `person` is null for the launch token and WORLDLINE_TOKENS. */
export const MeView = z.object({
  person: z.object({ name: z.string(), display_name: z.string().nullable(), role: Role }).nullable(),
  /** Whether this bridge has named people (a hub) at all. */
  people: z.boolean(),
});
export type MeView = z.infer<typeof MeView>;
