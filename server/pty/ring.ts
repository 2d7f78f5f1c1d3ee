/**
 * The most recent output of a terminal, at most `maxBytes` of it, addressed by byte
 * offset since the terminal started (the "cursor"): chunks are kept as they were sent,
 * so handing out a tail never copies more than the first, partial chunk.
 */
export class OutputRing {
  private readonly chunks: Uint8Array[] = [];
  private bytes = 0;
  /** Offset of the first byte still held. */
  private first = 0;

  constructor(private readonly maxBytes: number) {}

  /** Offset just past the newest byte: how much output there has been in total. */
  get end(): number {
    return this.first + this.bytes;
  }

  /** Offset of the oldest byte still held. */
  get start(): number {
    return this.first;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    // Whole chunks are dropped; the newest one always stays, even if larger than the bound.
    while (this.bytes > this.maxBytes && this.chunks.length > 1) {
      const dropped = this.chunks.shift() as Uint8Array;
      this.bytes -= dropped.length;
      this.first += dropped.length;
    }
  }

  /** The output from `offset` to the end, or null when the ring no longer holds all of it. */
  since(offset: number): Uint8Array[] | null {
    if (offset < this.first || offset > this.end) return null;
    const result: Uint8Array[] = [];
    let position = this.first;
    for (const chunk of this.chunks) {
      const chunkEnd = position + chunk.length;
      if (chunkEnd > offset) result.push(offset > position ? chunk.subarray(offset - position) : chunk);
      position = chunkEnd;
    }
    return result;
  }

  /** An offset at or after `offset` where a line begins (just after a "\n"), or `offset` itself if none is held. */
  lineStartFrom(offset: number): number {
    let position = this.first;
    for (const chunk of this.chunks) {
      const chunkEnd = position + chunk.length;
      if (chunkEnd > offset) {
        const from = Math.max(0, offset - position);
        const newline = chunk.indexOf(0x0a, from);
        if (newline >= 0) return position + newline + 1;
      }
      position = chunkEnd;
    }
    return offset;
  }

  clear(): void {
    this.chunks.length = 0;
    this.first += this.bytes;
    this.bytes = 0;
  }
}
