import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import type { SqlDriverAdapterFactory } from "@prisma/client/runtime/client";
import type BetterSqlite3 from "better-sqlite3";
import { WrappedConnection, WrappedTransaction, type Query, type Transaction } from "./adapter-wrap";
import { keptIn } from "./lru";

/**
 * How long one statement may block the event loop waiting for another process's lock (SQLite's
 * busy timeout). better-sqlite3 is synchronous: with a 5 s busy timeout a lock held by another
 * process froze the whole bridge, health checks included.
 */
export const SQLITE_BUSY_SLICE_MS = 20;
/** How long a statement is retried, between slices, before SQLITE_BUSY reaches its caller (the durable writer retries on). */
const SQLITE_BUSY_BUDGET_MS = 5_000;
/** The async pause between slices: the event loop serves everything else meanwhile. */
const SQLITE_BUSY_PAUSE_MS = 30;

function isBusy(error: unknown): boolean {
  const cause = (error as { cause?: { originalCode?: string } } | null)?.cause;
  return typeof cause?.originalCode === "string" && cause.originalCode.startsWith("SQLITE_BUSY");
}

/** Runs a statement, and on SQLITE_BUSY tries again after an async pause until the budget is spent. */
async function patiently<T>(run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (!isBusy(error) || Date.now() - started >= SQLITE_BUSY_BUDGET_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, SQLITE_BUSY_PAUSE_MS));
    }
  }
}

/** A connection whose every statement, and the start of every transaction, waits for a lock without blocking. */
class UnblockingConnection extends WrappedConnection {
  protected statement<T>(query: Query, run: (query: Query) => Promise<T>): Promise<T> {
    return patiently(() => run(query));
  }

  protected async transaction(inner: Transaction): Promise<Transaction> {
    return new UnblockingTransaction(inner);
  }

  override startTransaction(...args: Parameters<WrappedConnection["startTransaction"]>) {
    return patiently(() => super.startTransaction(...args));
  }
}

/**
 * A transaction whose statements wait as the connection's do, and whose end cannot leave the
 * connection locked. Prisma sends the COMMIT or ROLLBACK statement, then calls the transaction's
 * commit/rollback, which releases the adapter's lock on the connection; when the statement fails
 * (SQLITE_FULL at COMMIT, or a ROLLBACK after SQLite already rolled back on a full disk) that
 * second call never came and every later transaction waited forever. Here a failed end rolls back
 * what is left, releases the connection, and rethrows a COMMIT's error (the durable writer retries
 * the whole transaction); a ROLLBACK of what is already rolled back succeeds.
 */
class UnblockingTransaction extends WrappedTransaction {
  protected async statement<T>(query: Query, run: (query: Query) => Promise<T>): Promise<T> {
    const end = /^\s*(COMMIT|ROLLBACK)\s*$/i.exec(query.sql)?.[1].toUpperCase();
    if (!end) return patiently(() => run(query));
    try {
      return await patiently(() => run(query));
    } catch (error) {
      // What SQLite still holds of the transaction (a COMMIT that failed on a full disk) is rolled
      // back; this ROLLBACK failing means SQLite already rolled it back, which is what was asked.
      await this.inner.executeRaw({ sql: "ROLLBACK", args: [], argTypes: [] }).catch(() => undefined);
      await this.inner.rollback();
      if (end === "COMMIT") throw error;
      return 0 as T; // a ROLLBACK's result: no rows
    }
  }
}

/**
 * Prisma's SQLite adapter with short busy timeouts and async retries: while another process holds
 * the database's write lock, a write waits in slices of SQLITE_BUSY_SLICE_MS with the event loop
 * free between them, so health, pages and other sessions keep answering (measured in the fault
 * suite). A factory of Prisma's driver adapter interface, wrapping the library's connections.
 */
export function sqliteAdapter(file: string): SqlDriverAdapterFactory {
  const factory = new PrismaBetterSQLite3({ url: `file:${file}`, timeout: SQLITE_BUSY_SLICE_MS });
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const connection = await factory.connect();
      // The adapter's database handle: a public field of its connection, outside its declared type.
      keepStatements((connection as unknown as { client: BetterSqlite3.Database }).client);
      return new UnblockingConnection(connection);
    },
  };
}

/** Prepared statements kept per connection, the least recently used dropped first. */
const MAX_STATEMENTS = 200;

type Statement = BetterSqlite3.Statement<unknown[]>;

/**
 * The adapter prepares every statement anew (`prepare(sql).bind(args)`, then `run()`, or
 * `columns()` and `raw().all()`): SQLite parses and plans the same SQL on every query, about
 * 0.08 ms each, a dozen times before a prompt's model request. Here `prepare` answers from a cache
 * of prepared statements, each wrapped so that `bind` keeps its values for the call that runs it
 * (better-sqlite3 binds a statement once for good, and a kept one is bound per call). SQLite
 * prepares a statement again itself when the schema changed under it.
 */
function keepStatements(database: BetterSqlite3.Database): void {
  const prepare = database.prepare.bind(database);
  const statements = new Map<string, Statement>();
  const cached = (sql: string): Statement => keptIn(statements, sql, () => prepare(sql), MAX_STATEMENTS);
  const bound = (statement: Statement, args: unknown[]) => {
    let rows: unknown[] | undefined;
    return {
      reader: statement.reader,
      bind: (values: unknown[]) => bound(statement, values),
      run: () => statement.run(...args),
      // The adapter asks for the columns, then the rows. A kept statement learns that its table
      // changed (a migration) only when it runs, so it runs first and its columns are read after.
      columns: () => {
        rows = statement.raw(true).all(...args);
        return statement.columns();
      },
      raw: () => ({ all: () => rows ?? statement.raw(true).all(...args) }),
    };
  };
  database.prepare = ((sql: string) => bound(cached(sql), [])) as unknown as typeof database.prepare;
}
