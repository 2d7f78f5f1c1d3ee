import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapterFactory } from "@prisma/client/runtime/client";
import { WrappedConnection, WrappedTransaction, type Query, type Transaction } from "./adapter-wrap";

/** U+0000 → U+FFFD, the character Unicode has for "something unrepresentable was here". */
const NUL = /\0/g;
const REPLACEMENT = "\uFFFD";

function clean(value: unknown): unknown {
  if (typeof value === "string") return value.includes("\0") ? value.replace(NUL, REPLACEMENT) : value;
  if (Array.isArray(value))
    return value.some((item) => typeof item === "string" && item.includes("\0")) ? value.map(clean) : value;
  return value;
}

function cleanQuery(query: Query): Query {
  return query.args.some((arg) => clean(arg) !== arg) ? { ...query, args: query.args.map(clean) } : query;
}

/** A connection whose statements' bound values pass through `clean`, in and out of transactions. */
class CleanConnection extends WrappedConnection {
  protected statement<T>(query: Query, run: (query: Query) => Promise<T>): Promise<T> {
    return run(cleanQuery(query));
  }

  protected async transaction(inner: Transaction): Promise<Transaction> {
    return new CleanTransaction(inner);
  }
}

class CleanTransaction extends WrappedTransaction {
  protected statement<T>(query: Query, run: (query: Query) => Promise<T>): Promise<T> {
    return run(cleanQuery(query));
  }
}

/**
 * Prisma's PostgreSQL adapter, except that text bound to a statement has no NUL characters:
 * PostgreSQL's text cannot hold U+0000 (SQLite's can) and refuses the whole statement, so an id
 * or a title with a NUL in it (from a client, or a fuzzer) was a 500 instead of a "not found" or
 * a stored title. Such text is stored with U+FFFD in place of each NUL; ids never contain either.
 * A factory of Prisma's driver adapter interface, wrapping the library's connections.
 */
export function postgresAdapter(connectionString: string): SqlDriverAdapterFactory {
  const factory = new PrismaPg({ connectionString });
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => new CleanConnection(await factory.connect()),
  };
}
