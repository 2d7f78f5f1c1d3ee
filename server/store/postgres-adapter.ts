import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapterFactory } from "@prisma/client/runtime/client";

type Connection = Awaited<ReturnType<SqlDriverAdapterFactory["connect"]>>;
type Query = Parameters<Connection["queryRaw"]>[0];
type Transaction = Awaited<ReturnType<Connection["startTransaction"]>>;

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

/** A connection (Prisma's driver adapter interface) whose statements' bound values pass through `clean`. */
class CleanConnection implements Connection {
  readonly provider: Connection["provider"];
  readonly adapterName: Connection["adapterName"];
  readonly getConnectionInfo: Connection["getConnectionInfo"];

  constructor(private readonly inner: Connection) {
    this.provider = inner.provider;
    this.adapterName = inner.adapterName;
    this.getConnectionInfo = inner.getConnectionInfo?.bind(inner);
  }

  queryRaw(query: Query) {
    return this.inner.queryRaw(cleanQuery(query));
  }

  executeRaw(query: Query) {
    return this.inner.executeRaw(cleanQuery(query));
  }

  executeScript(script: string) {
    return this.inner.executeScript(script);
  }

  async startTransaction(...args: Parameters<Connection["startTransaction"]>) {
    return new CleanTransaction(await this.inner.startTransaction(...args));
  }

  dispose() {
    return this.inner.dispose();
  }
}

/** A transaction whose statements' bound values pass through `clean`. */
class CleanTransaction implements Transaction {
  readonly provider: Transaction["provider"];
  readonly adapterName: Transaction["adapterName"];
  readonly options: Transaction["options"];

  constructor(private readonly inner: Transaction) {
    this.provider = inner.provider;
    this.adapterName = inner.adapterName;
    this.options = inner.options;
  }

  queryRaw(query: Query) {
    return this.inner.queryRaw(cleanQuery(query));
  }

  executeRaw(query: Query) {
    return this.inner.executeRaw(cleanQuery(query));
  }

  commit() {
    return this.inner.commit();
  }

  rollback() {
    return this.inner.rollback();
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
