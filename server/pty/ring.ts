import { copyBytes } from "./copy-bytes.mjs";

/**
 * The most recent output of a terminal, its last `capacity` bytes, addressed by byte offset since the terminal
 * started (the "cursor"). The bytes are written in a circle into one SharedArrayBuffer, which the screen mirror's
 * worker thread reads in place (mirror-worker.mjs, `ringBytes`): output is copied once, into the ring, and no buffer
 * is allocated, posted or handed back per piece. Offset `o` lives at index `o % capacity`.
 */
export class OutputRing {
  readonly buffer: SharedArrayBuffer;
  private readonly bytes: Buffer;
  private total = 0;
  /** Offset before which the ring holds nothing, whatever is still in the buffer (see `clear`). */
  private floor = 0;

  constructor(readonly capacity: number) {
    this.buffer = new SharedArrayBuffer(capacity);
    this.bytes = Buffer.from(this.buffer);
  }

  /** Offset just past the newest byte: how much output there has been in total. */
  get end(): number {
    return this.total;
  }

  /** Offset of the oldest byte still held. */
  get start(): number {
    return Math.max(this.floor, this.total - this.capacity);
  }

  push(chunk: Uint8Array): void {
    // Of a chunk larger than the ring, only its end can be held.
    const kept = chunk.length > this.capacity ? chunk.subarray(chunk.length - this.capacity) : chunk;
    const at = (this.total + chunk.length - kept.length) % this.capacity;
    const head = Math.min(kept.length, this.capacity - at);
    copyBytes(this.bytes, kept.subarray(0, head), at);
    copyBytes(this.bytes, kept.subarray(head), 0);
    this.total += chunk.length;
  }

  /**
   * A copy of the output from `offset` to the end, or null when the ring no longer holds all of it. A copy: the
   * caller hands it to sockets that write it later, after the ring may have moved on.
   */
  since(offset: number): Buffer | null {
    if (offset < this.start || offset > this.end) return null;
    const copy = Buffer.allocUnsafe(this.end - offset);
    const at = offset % this.capacity;
    const head = Math.min(copy.length, this.capacity - at);
    copyBytes(copy, this.bytes.subarray(at, at + head), 0);
    copyBytes(copy, this.bytes.subarray(0, copy.length - head), head);
    return copy;
  }

  /** An offset at or after `offset` where a line begins (just after a "\n"), or `offset` itself if none is held. */
  lineStartFrom(offset: number): number {
    for (let position = Math.max(offset, this.start); position < this.end;) {
      const at = position % this.capacity;
      const stretch = Math.min(this.end - position, this.capacity - at);
      const newline = this.bytes.subarray(at, at + stretch).indexOf(0x0a);
      if (newline >= 0) return position + newline + 1;
      position += stretch;
    }
    return offset;
  }

  clear(): void {
    this.floor = this.total;
  }
}
