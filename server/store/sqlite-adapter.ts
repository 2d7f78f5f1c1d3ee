import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";

type Adapter = Awaited<ReturnType<PrismaBetterSQLite3["connect"]>>;
type Query = Parameters<Adapter["queryRaw"]>[0];

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

interface Transaction {
  client: { inTransaction: boolean; prepare(sql: string): { run(): unknown } };
  rollback(): Promise<void>;
}

/**
 * A transaction's COMMIT or ROLLBACK statement. Prisma sends the statement, then calls the
 * transaction's commit/rollback, which releases the adapter's lock on the connection; when the
 * statement fails (SQLITE_FULL at COMMIT, or a ROLLBACK after SQLite already rolled back on a full
 * disk) that second call never comes and every later transaction waited forever. Here a failed end
 * rolls back what is left, releases the connection, and rethrows a COMMIT's error (the durable
 * writer retries the whole transaction); a ROLLBACK of what is already rolled back succeeds.
 */
async function endTransaction(target: Transaction, run: () => Promise<unknown>, commit: boolean): Promise<unknown> {
  try {
    return await patiently(run);
  } catch (error) {
    if (target.client.inTransaction) {
      try {
        target.client.prepare("ROLLBACK").run();
      } catch {
        // Nothing more can be done for this transaction; the connection is released below either way.
      }
    }
    await target.rollback();
    if (commit || target.client.inTransaction) throw error;
    return 0;
  }
}

/** The queryable (connection or transaction) with every statement waiting for a lock without blocking. */
function unblocking<T extends object>(queryable: T, transaction = false): T {
  return new Proxy(queryable, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      if (property === "queryRaw" || property === "executeRaw")
        return (query: Query) => {
          const run = () => value.call(target, query) as Promise<unknown>;
          const end = transaction ? /^\s*(COMMIT|ROLLBACK)\s*$/i.exec(query.sql)?.[1].toUpperCase() : undefined;
          return end ? endTransaction(target as unknown as Transaction, run, end === "COMMIT") : patiently(run);
        };
      if (property === "startTransaction")
        return async (...args: unknown[]) =>
          unblocking((await patiently(() => value.apply(target, args) as Promise<object>)) as object, true);
      return value.bind(target);
    },
  });
}

/**
 * Prisma's SQLite adapter with short busy timeouts and async retries: while another process holds
 * the database's write lock, a write waits in slices of SQLITE_BUSY_SLICE_MS with the event loop
 * free between them, so health, pages and other sessions keep answering (measured in the fault suite).
 */
export function sqliteAdapter(file: string): PrismaBetterSQLite3 {
  const factory = new PrismaBetterSQLite3({ url: `file:${file}`, timeout: SQLITE_BUSY_SLICE_MS });
  const connect = factory.connect.bind(factory);
  factory.connect = async () => unblocking(await connect());
  return factory;
}
