import { describe, expect, it } from "vitest";
import { OutputRing } from "../../../server/pty/ring";

const text = (bytes: Uint8Array | null) => (bytes ? Buffer.from(bytes).toString() : null);

describe("OutputRing", () => {
  it("hands out a copy of the output from any offset it still holds, and null for what it wrote over", () => {
    const ring = new OutputRing(10);
    ring.push(Buffer.from("abcd"));
    ring.push(Buffer.from("efgh"));
    expect(ring.end).toBe(8);
    expect(text(ring.since(2))).toBe("cdefgh");
    expect(text(ring.since(8))).toBe("");
    ring.push(Buffer.from("ijkl")); // 12 > 10: it goes on over "ab", from the buffer's start.
    expect(ring.start).toBe(2);
    expect(ring.end).toBe(12);
    expect(ring.since(1)).toBeNull();
    expect(text(ring.since(2))).toBe("cdefghijkl");
    expect(text(ring.since(5))).toBe("fghijkl");
    expect(ring.since(13)).toBeNull();
    // A copy: what the ring writes next does not change what was handed out.
    const copy = ring.since(9)!;
    ring.push(Buffer.from("mnopqrs"));
    expect(text(copy)).toBe("jkl");
    expect(text(ring.since(9))).toBe("jklmnopqrs");
  });

  it("keeps the end of a chunk larger than itself, and finds line starts across its end", () => {
    const ring = new OutputRing(4);
    ring.push(Buffer.from("ab\ncd"));
    expect(ring.start).toBe(1);
    expect(text(ring.since(1))).toBe("b\ncd");
    ring.push(Buffer.from("ef\ngh\n")); // Larger than the ring: only "gh\n" and the "\n" before it stay.
    expect(ring.start).toBe(7);
    expect(ring.end).toBe(11);
    expect(text(ring.since(7))).toBe("\ngh\n");
    expect(ring.lineStartFrom(7)).toBe(8);
    expect(ring.lineStartFrom(9)).toBe(11);
    expect(ring.lineStartFrom(11)).toBe(11);
    expect(ring.lineStartFrom(2)).toBe(8); // From the oldest byte held, whatever the offset asked.
    ring.clear();
    expect(ring.start).toBe(11);
    expect(text(ring.since(11))).toBe("");
    expect(ring.since(10)).toBeNull();
  });

  it("is the shared buffer the worker reads: offset o at index o % capacity", () => {
    const ring = new OutputRing(8);
    ring.push(Buffer.from("0123456789"));
    expect(ring.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(Buffer.from(ring.buffer).toString()).toBe("89234567");
  });
});
