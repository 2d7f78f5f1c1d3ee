import { randomBytes } from "node:crypto";

/**
 * argon2id (the library's default algorithm) at OWASP's recommended minimum: 19 MiB, two passes,
 * one lane. Prebuilt native binaries come from the npm registry (no compiler, no download).
 */
const ARGON2_OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** The native binding loads at the first password, not at every bridge's start. */
let library: Promise<typeof import("@node-rs/argon2")> | undefined;
const argon2 = () => (library ??= import("@node-rs/argon2"));

/** Checked against when the name is unknown, so a wrong name and a wrong password take the same time. */
let decoy: Promise<string> | undefined;

export async function hashPassword(password: string): Promise<string> {
  return (await argon2()).hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (!stored) {
    decoy ??= hashPassword(randomBytes(16).toString("hex"));
    // Only the time it takes matters: an unknown name costs as much as a wrong password.
    const { verify } = await argon2();
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  const { verify } = await argon2();
  // A malformed stored hash is a refusal, not a crash of the sign-in route.
  return verify(stored, password).catch(() => false);
}

/** A password printed once by `worldline users add`: 20 characters from 120 random bits. */
export function generatePassword(): string {
  return randomBytes(15).toString("base64url");
}
