/**
 * Bounded output buffers. A foreground command keeps its beginning and its end
 * (errors usually come last); a background task keeps a sliding window that
 * readers consume with a cursor.
 */

/** Share of the cap kept from the beginning of a foreground command's output. */
const HEAD_SHARE = 0.25;

export class HeadTailBuffer {
  private head = "";
  private tail = "";
  private dropped = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(maxChars: number) {
    this.headMax = Math.floor(maxChars * HEAD_SHARE);
    this.tailMax = maxChars - this.headMax;
  }

  append(chunk: string): void {
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (chunk === "") return;
    this.tail += chunk;
    if (this.tail.length > this.tailMax) {
      const cut = this.tail.length - this.tailMax;
      this.dropped += cut;
      this.tail = this.tail.slice(cut);
    }
  }

  toString(): string {
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n[output truncated: ${this.dropped} more characters]\n${this.tail}`;
  }
}

export class RollingLog {
  private text = "";
  /** Characters ever written; `text` holds the last ones. */
  private total = 0;

  constructor(private readonly maxChars: number) {}

  append(chunk: string): void {
    this.text += chunk;
    this.total += chunk.length;
    if (this.text.length > this.maxChars) this.text = this.text.slice(this.text.length - this.maxChars);
  }

  get length(): number {
    return this.total;
  }

  /** Output written since `cursor`, at most `max` characters (the newest), with a note for what was skipped. */
  readFrom(cursor: number, max: number): { text: string; cursor: number } {
    const windowStart = this.total - this.text.length;
    let from = Math.max(cursor, windowStart);
    let skipped = from - cursor;
    if (this.total - from > max) {
      skipped += this.total - max - from;
      from = this.total - max;
    }
    const text = this.text.slice(from - windowStart);
    return { text: skipped > 0 ? `[output truncated: ${skipped} more characters]\n${text}` : text, cursor: this.total };
  }
}
