import type { SqlDriverAdapterFactory } from "@prisma/client/runtime/client";

export type Connection = Awaited<ReturnType<SqlDriverAdapterFactory["connect"]>>;
export type Transaction = Awaited<ReturnType<Connection["startTransaction"]>>;
export type Query = Parameters<Connection["queryRaw"]>[0];

/**
 * A connection of Prisma's driver adapter interface around the library's own, each statement
 * passed through `statement` and each transaction wrapped by `transaction`: how the SQLite and
 * PostgreSQL adapters (sqlite-adapter.ts, postgres-adapter.ts) change what they must, through
 * the interface Prisma documents for custom adapters.
 */
export abstract class WrappedConnection implements Connection {
  readonly provider: Connection["provider"];
  readonly adapterName: Connection["adapterName"];
  readonly getConnectionInfo: Connection["getConnectionInfo"];

  constructor(protected readonly inner: Connection) {
    this.provider = inner.provider;
    this.adapterName = inner.adapterName;
    this.getConnectionInfo = inner.getConnectionInfo?.bind(inner);
  }

  protected abstract statement<T>(query: Query, run: (query: Query) => Promise<T>): Promise<T>;
  protected abstract transaction(inner: Transaction): Promise<Transaction>;

  queryRaw(query: Query) {
    return this.statement(query, (sent) => this.inner.queryRaw(sent));
  }

  executeRaw(query: Query) {
    return this.statement(query, (sent) => this.inner.executeRaw(sent));
  }

  executeScript(script: string) {
    return this.inner.executeScript(script);
  }

  async startTransaction(...args: Parameters<Connection["startTransaction"]>) {
    return this.transaction(await this.inner.startTransaction(...args));
  }

  dispose() {
    return this.inner.dispose();
  }
}

/** A transaction of the same interface, each statement passed through `statement`. */
export abstract class WrappedTransaction implements Transaction {
  readonly provider: Transaction["provider"];
  readonly adapterName: Transaction["adapterName"];
  readonly options: Transaction["options"];

  constructor(protected readonly inner: Transaction) {
    this.provider = inner.provider;
    this.adapterName = inner.adapterName;
    this.options = inner.options;
  }

  protected abstract statement<T>(query: Query, run: (query: Query) => Promise<T>): Promise<T>;

  queryRaw(query: Query) {
    return this.statement(query, (sent) => this.inner.queryRaw(sent));
  }

  executeRaw(query: Query) {
    return this.statement(query, (sent) => this.inner.executeRaw(sent));
  }

  commit() {
    return this.inner.commit();
  }

  rollback() {
    return this.inner.rollback();
  }
}
