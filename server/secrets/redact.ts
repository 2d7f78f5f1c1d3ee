/**
 * Secret redaction for anything that leaves the process or is persisted: audit
 * records, shell output shown to the model, logs. Patterns err towards removing
 * too much; a redacted token reads `[REDACTED]` (or keeps a short label so a
 * human can still tell what was there).
 */

const REDACTED = "[REDACTED]";

/** Values shorter than this are not redacted by value: "1" or "true" would shred unrelated text. */
const MIN_KNOWN_VALUE_LENGTH = 6;

interface SecretPattern {
  pattern: RegExp;
  replace: string | ((match: string, ...groups: string[]) => string);
  /** A `name = value` form rather than a credential's own shape. */
  assignment?: boolean;
}

// Order matters: whole blocks (PEM) and structured forms (URLs, assignments)
// go before bare token shapes so the labels stay readable.
const SECRET_PATTERNS: SecretPattern[] = [
  {
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: "[REDACTED PRIVATE KEY]",
  },
  // scheme://user:password@host → keep the user, drop the password.
  {
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/@]*):([^\s@/]+)@/gi,
    replace: (_m, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`,
  },
  {
    pattern: /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
    replace: (_m, kind: string) => `${kind} ${REDACTED}`,
  },
  // password=…, token: …, --api-key …, PASSWORD="…", "secret": "…"
  {
    pattern:
      /((?:^|[^A-Za-z0-9])(?:--?)?["']?[A-Za-z0-9_.-]*(?:passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth|credentials?)["']?\s*(?:[:=]\s*|\s+(?=["']))["']?)((?!\[REDACTED)[^\s"'&;,]{1,})/gi,
    replace: (_m, prefix: string) => `${prefix}${REDACTED}`,
    assignment: true,
  },
  { pattern: /\bsk-ant-[A-Za-z0-9_-]{16,}/g, replace: REDACTED },
  { pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g, replace: REDACTED },
  { pattern: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}/g, replace: REDACTED },
  { pattern: /\bgithub_pat_[A-Za-z0-9_]{40,}/g, replace: REDACTED },
  { pattern: /\b(?:AKIA|ASIA|AIDA|AROA)[A-Z0-9]{16}\b/g, replace: REDACTED },
  { pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replace: REDACTED },
  { pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, replace: REDACTED },
  { pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, replace: REDACTED },
  // AWS secret access keys have no prefix; only catch them next to their name.
  {
    pattern: /(aws_secret_access_key\s*[=:]\s*["']?)[A-Za-z0-9/+=]{16,}/gi,
    replace: (_m, prefix: string) => `${prefix}${REDACTED}`,
  },
];

/** Removes API keys, tokens, passwords, private keys and credentials in URLs from free text. */
export function redactSecrets(text: string): string {
  return applyPatterns(text, SECRET_PATTERNS);
}

/**
 * The `name = value` assignment pattern would also shred source code the model reads
 * (`token = getToken()`), and an edit built on shredded text fails; tool output only
 * loses things shaped like a credential (key prefixes, JWTs, PEM blocks, URL passwords).
 */
const SHAPE_PATTERNS = SECRET_PATTERNS.filter((entry) => !entry.assignment);

/** Removes only text shaped like a credential; safe on source code. Used on tool output. */
export function redactSecretShapes(text: string): string {
  return applyPatterns(text, SHAPE_PATTERNS);
}

/** Tool output, error messages and log lines: credential shapes plus the bridge's own secret env values. */
export function redactForOutput(text: string, env: Record<string, string | undefined> = process.env): string {
  return redactKnownValues(redactSecretShapes(text), [...secretEnvValues(env), ...held]);
}

/** Secrets this process no longer keeps in its environment (server/secrets/environment.ts), still redacted by value. */
const held = new Set<string>();

export function holdSecretValues(values: Iterable<string>): void {
  for (const value of values) held.add(value);
}

export function heldSecretValues(): string[] {
  return [...held];
}

function applyPatterns(text: string, patterns: SecretPattern[]): string {
  let result = text;
  for (const { pattern, replace } of patterns) {
    result = typeof replace === "string" ? result.replace(pattern, replace) : result.replace(pattern, replace as never);
  }
  return result;
}

/** Replaces every exact occurrence of the given secret values (env secrets, a sudo password). */
export function redactKnownValues(text: string, values: Iterable<string | null | undefined>): string {
  const usable = [
    ...new Set([...values].filter((v): v is string => typeof v === "string" && v.length >= MIN_KNOWN_VALUE_LENGTH)),
  ];
  // Longest first so a value that contains another is removed whole.
  usable.sort((a, b) => b.length - a.length);
  let result = text;
  for (const value of usable) result = result.split(value).join(REDACTED);
  return result;
}

export const SECRET_ENV_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|AUTH)/i;

/** The values of environment variables whose names say they hold a secret. */
export function secretEnvValues(env: Record<string, string | undefined> = process.env): string[] {
  return Object.entries(env)
    .filter(([name, value]) => SECRET_ENV_NAME.test(name) && typeof value === "string")
    .map(([, value]) => value as string);
}
