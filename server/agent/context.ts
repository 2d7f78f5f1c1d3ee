import * as store from "../store";
import type { ChatMessage } from "./provider";
import { estimateTokens } from "./stats";
import { toWireMessages, type WireEntry } from "./wire-messages";

/** What the model has been told about the workspace, to tell it only what changed (server/agent/turn-context.ts). */
export interface WorkspaceTold {
  listing: string;
  agentsMd: string;
  todos?: string;
}

/** How a context's writes are made: fenced on the running turn's claim, and who hears that they wait. */
export interface ContextWriter {
  epoch?: number;
  durable?: store.DurableOptions;
}

/** One record of the append-only history. */
export type HistoryRecord =
  | { kind: "message"; message: ChatMessage }
  | { kind: "checkpoint"; checkpointId: string; number: number }
  /** A model call's usage: `tokens` is the context's size then; the rest as the provider reported them. */
  | { kind: "usage"; tokens: number; input?: number; cached?: number; output?: number }
  /**
   * Older messages replaced by a summary: the model sees the summary, then the
   * records from `keepFrom` on. The replaced records stay in the log, so a
   * rewind to a checkpoint before the compaction restores them.
   */
  | { kind: "compaction"; summary: string; keepFrom: number }
  /**
   * The session's system prompt, fixed from here on so every request starts with the same bytes (a
   * provider's prompt cache). Written before the first turn; a rewind to before it renders a new one.
   */
  | { kind: "system"; content: string }
  /** What the model was told about the workspace (in the system prompt or a turn's context block). */
  | ({ kind: "told" } & WorkspaceTold);

export interface PositionedRecord {
  position: number;
  record: HistoryRecord;
}

/**
 * A session's conversation as the model sees it, persisted through the store as
 * an append-only record with checkpoint markers and restored exactly on reopen.
 * Without a db (subagents) it lives in memory only.
 */
export class Context {
  /**
   * Records appended with `stage` and not yet stored, in position order. They leave this list only
   * once a write stored them: a failed write is retried by the next one, never dropped, so stored
   * positions stay gap-free.
   */
  private unsaved: store.HistoryRow[] = [];
  /** The store's writes of this context, one after another (never rejects; see `saveError`). */
  private saving: Promise<void> = Promise.resolve();
  /** A write that failed since the last `save`: its records are still in `unsaved`. */
  private saveError: { error: unknown } | undefined;
  /** The claim the writes are fenced on, and who hears that they wait (set per turn by the runtime). */
  private writer: ContextWriter = {};

  private constructor(
    private readonly db: store.Db | null,
    readonly sessionId: string,
    private records: HistoryRecord[],
  ) {}

  static async load(db: store.Db, sessionId: string): Promise<Context> {
    const rows = await store.readHistory(db, sessionId);
    return new Context(
      db,
      sessionId,
      rows.map((row) => JSON.parse(row.data) as HistoryRecord),
    );
  }

  static ephemeral(sessionId: string): Context {
    return new Context(null, sessionId, []);
  }

  get length(): number {
    return this.records.length;
  }

  all(): readonly HistoryRecord[] {
    return this.records;
  }

  /** The records the model currently sees: after the last compaction, its kept tail and what followed. */
  view(): PositionedRecord[] {
    const positioned = this.records.map((record, position) => ({ position, record }));
    const last = findLastIndex(this.records, (record) => record.kind === "compaction");
    if (last === -1) return positioned;
    const compaction = this.records[last] as Extract<HistoryRecord, { kind: "compaction" }>;
    // The summary comes first; an earlier compaction in the kept part is already inside it.
    const kept = positioned.slice(compaction.keepFrom, last).filter(({ record }) => record.kind !== "compaction");
    return [positioned[last], ...kept, ...positioned.slice(last + 1)];
  }

  /**
   * Chat messages in order, as requests send them (server/agent/wire-messages.ts): roles alternate, and
   * checkpoint ids ride inside messages, only when asked (D-Mail on).
   */
  messages(options: { checkpoints?: boolean } = {}): ChatMessage[] {
    const entries = this.view().flatMap(({ record }): WireEntry[] => {
      switch (record.kind) {
        case "message":
          return [{ message: record.message }];
        case "compaction":
          return [{ message: { role: "user", content: summaryMessage(record.summary) } }];
        case "checkpoint":
          return [{ checkpoint: record.number }];
        default:
          return [];
      }
    });
    return toWireMessages(entries, options);
  }

  /** The session's fixed system prompt, if one was written (compaction keeps it; a rewind before it drops it). */
  systemPrompt(): string | undefined {
    const record = findLast(this.records, (r) => r.kind === "system");
    return record?.kind === "system" ? record.content : undefined;
  }

  /** What the model was last told about the workspace. */
  told(): WorkspaceTold | undefined {
    const record = findLast(this.records, (r) => r.kind === "told");
    return record?.kind === "told"
      ? { listing: record.listing, agentsMd: record.agentsMd, todos: record.todos }
      : undefined;
  }

  /** Tokens reported by the provider for the context up to its last call. */
  lastUsageTokens(): number {
    for (let i = this.records.length - 1; i >= 0; i--) {
      const record = this.records[i];
      if (record.kind === "usage") return record.tokens;
    }
    return 0;
  }

  /**
   * The context's size: the provider's count at its last call plus an estimate
   * for what came after; all estimated when there is no usable count (after a
   * compaction or a revert dropped the call it counted).
   */
  estimatedTokens(): number {
    const view = this.view();
    // A count taken before the last compaction measured the old, longer context.
    const compactedAt = view[0]?.record.kind === "compaction" ? view[0].position : -1;
    let total = 0;
    for (let i = view.length - 1; i >= 0; i--) {
      const { position, record } = view[i];
      if (record.kind === "usage" && position > compactedAt) return total + record.tokens;
      total += recordTokens(record);
    }
    return total;
  }

  /** Where the marker of a checkpoint the model can still see sits, by its number. */
  checkpointPosition(number: number): number | undefined {
    return this.view().find(({ record }) => record.kind === "checkpoint" && record.number === number)?.position;
  }

  visibleCheckpointNumbers(): number[] {
    return this.view().flatMap(({ record }) => (record.kind === "checkpoint" ? [record.number] : []));
  }

  /** Appends records and writes them (with any staged before them). */
  async append(...records: HistoryRecord[]): Promise<void> {
    this.stage(...records);
    await this.save();
  }

  /**
   * Appends records in memory at once (the next `messages()` has them) and leaves their write
   * for the next `flush`, `save` or `append`, which write them in order. The loop stages what
   * comes before a step's model request (checkpoint markers, the user's message), flushes once
   * the request is on its way and saves before the step ends: three database round trips less
   * before the first token.
   */
  stage(...records: HistoryRecord[]): void {
    const start = this.records.length;
    this.records = this.records.concat(records);
    if (!this.db) return;
    for (const [i, record] of records.entries())
      this.unsaved.push({ position: start + i, kind: record.kind, data: JSON.stringify(record) });
  }

  /** Fences this context's writes on a claim's epoch and says who hears that they wait (the running turn). */
  setWriter(writer: ContextWriter): void {
    this.writer = writer;
  }

  /**
   * Starts writing the staged records, after any earlier write; a failure is reported by the next
   * `save`. The durable writer waits out a store outage or a full disk (with backoff) before failing.
   */
  flush(): void {
    if (!this.db || this.unsaved.length === 0) return;
    this.saving = this.saving.then(() => this.writeUnsaved());
  }

  private async writeUnsaved(): Promise<void> {
    const db = this.db;
    // After a failure nothing later is written until `save` reported it: a later batch would leave a gap.
    if (!db || this.saveError || this.unsaved.length === 0) return;
    const batch = this.unsaved.slice();
    const { epoch, durable } = this.writer;
    try {
      await store.durably(
        () => store.appendHistory(db, this.sessionId, batch, epoch === undefined ? undefined : { epoch }),
        durable,
      );
      const last = batch[batch.length - 1].position;
      this.unsaved = this.unsaved.filter((entry) => entry.position > last);
    } catch (error) {
      this.saveError = { error };
    }
  }

  /**
   * Writes the staged records and waits for every earlier write. Rejects with the error of a
   * write that failed since the last `save` (also one a `flush` started), once.
   */
  async save(): Promise<void> {
    this.flush();
    await this.saving;
    const failed = this.saveError;
    this.saveError = undefined;
    if (failed) throw failed.error;
  }

  /**
   * Writes what is staged and waits for it, leaving a failure for `save` to report: false when
   * something staged is not stored (a turn's run state must not be stored ahead of its history).
   */
  async stored(): Promise<boolean> {
    this.flush();
    await this.saving;
    return this.saveError === undefined && this.unsaved.length === 0;
  }

  /** Drops everything from `position` on (rewind, D-Mail). */
  async truncate(position: number): Promise<void> {
    this.records = this.records.slice(0, position);
    this.unsaved = this.unsaved.filter((entry) => entry.position < position);
    if (!this.db) return;
    await this.save();
    await store.truncateHistory(this.db, this.sessionId, position);
  }

  /** Re-reads the persisted log (after another module rewound it). */
  async reload(): Promise<void> {
    if (!this.db) return;
    await this.save();
    const rows = await store.readHistory(this.db, this.sessionId);
    this.records = rows.map((row) => JSON.parse(row.data) as HistoryRecord);
  }
}

export function summaryMessage(summary: string): string {
  return `<system>Earlier messages of this conversation were compacted into this summary:</system>\n${summary}`;
}

/** Rough tokens of one record as a model would see it (text plus a little per-message overhead). */
export function recordTokens(record: HistoryRecord): number {
  switch (record.kind) {
    case "message":
      return messageTokens(record.message);
    case "compaction":
      return estimateTokens(summaryMessage(record.summary)) + MESSAGE_OVERHEAD_TOKENS;
    default:
      // The system prompt is not counted here, as before it was a record: the provider's count includes it.
      return 0;
  }
}

/** Role markers and separators each message costs in chat templates. */
const MESSAGE_OVERHEAD_TOKENS = 4;

/** What an image costs a model, roughly (its base64 text would count far more). */
const IMAGE_TOKENS = 1_000;

export function messageTokens(message: ChatMessage): number {
  if (message.role === "user" && Array.isArray(message.content)) {
    const parts = message.content;
    const text = parts.map((part) => (part.type === "text" ? part.text : "")).join("\n");
    return (
      estimateTokens(text) +
      IMAGE_TOKENS * parts.filter((part) => part.type === "image_url").length +
      MESSAGE_OVERHEAD_TOKENS
    );
  }
  let text = typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
  if (message.role === "assistant") {
    text += message.reasoning_content ?? "";
    for (const call of message.tool_calls ?? []) text += call.function.name + call.function.arguments;
  }
  return estimateTokens(text) + MESSAGE_OVERHEAD_TOKENS;
}

function findLast<T>(items: readonly T[], predicate: (item: T) => boolean): T | undefined {
  const index = findLastIndex(items, predicate);
  return index === -1 ? undefined : items[index];
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i])) return i;
  return -1;
}
