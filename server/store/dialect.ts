import { providerOf, type Db } from "./db";

/**
 * What differs between SQLite and PostgreSQL beyond what Prisma hides (prisma/README.md lists
 * the rules raw SQL follows to run on both).
 */

/** A unique-constraint violation, from a Prisma call (P2002) or a raw statement (P2010), on either database. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; meta?: { driverAdapterError?: { cause?: { kind?: string } } } };
  if (e?.code === "P2002") return true;
  return e?.code === "P2010" && e.meta?.driverAdapterError?.cause?.kind === "UniqueConstraintViolation";
}

/**
 * A `contains` filter that ignores case on both: SQLite's LIKE ignores ASCII case already,
 * PostgreSQL's needs Prisma's insensitive mode (which SQLite's client does not accept).
 */
export function containsIgnoringCase(db: Db, text: string): { contains: string } {
  return providerOf(db) === "postgresql"
    ? ({ contains: text, mode: "insensitive" } as { contains: string })
    : { contains: text };
}
