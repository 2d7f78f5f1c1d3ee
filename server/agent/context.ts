import * as store from "../store";
import type { ChatMessage } from "./provider";

/** One record of the append-only history. */
export type HistoryRecord =
  | { kind: "message"; message: ChatMessage }
  | { kind: "checkpoint"; checkpointId: string; number: number }
  | { kind: "usage"; tokens: number };

/**
 * A session's conversation as the model sees it, persisted through the store as
 * an append-only record with checkpoint markers and restored exactly on reopen.
 */
export class Context {
  private constructor(
    private readonly db: store.Db,
    readonly sessionId: string,
    private records: HistoryRecord[],
  ) {}

  static async load(db: store.Db, sessionId: string): Promise<Context> {
    const rows = await store.readHistory(db, sessionId);
    return new Context(db, sessionId, rows.map((row) => JSON.parse(row.data) as HistoryRecord));
  }

  get length(): number {
    return this.records.length;
  }

  /** Chat messages in order (markers and usage left out). */
  messages(): ChatMessage[] {
    return this.records.flatMap((record) => (record.kind === "message" ? [record.message] : []));
  }

  all(): readonly HistoryRecord[] {
    return this.records;
  }

  /** Tokens reported by the provider for the context up to its last call. */
  lastUsageTokens(): number {
    for (let i = this.records.length - 1; i >= 0; i--) {
      const record = this.records[i];
      if (record.kind === "usage") return record.tokens;
    }
    return 0;
  }

  async append(...records: HistoryRecord[]): Promise<void> {
    const start = this.records.length;
    this.records = this.records.concat(records);
    await store.appendHistory(
      this.db,
      this.sessionId,
      records.map((record, i) => ({ position: start + i, kind: record.kind, data: JSON.stringify(record) })),
    );
  }

  /** Drops everything from `position` on (rewind, D-Mail, compaction). */
  async truncate(position: number): Promise<void> {
    this.records = this.records.slice(0, position);
    await store.truncateHistory(this.db, this.sessionId, position);
  }
}
