import { describe, expect, it } from "vitest";
import { OutputRing } from "../../../server/pty/ring";

const text = (chunks: Uint8Array[] | null) => (chunks ? Buffer.concat(chunks).toString() : null);

describe("OutputRing", () => {
  it("hands out the output from any offset it still holds, and null for what it dropped", () => {
    const ring = new OutputRing(10);
    ring.push(Buffer.from("abcd"));
    ring.push(Buffer.from("efgh"));
    expect(ring.end).toBe(8);
    expect(text(ring.since(2))).toBe("cdefgh");
    expect(text(ring.since(8))).toBe("");
    ring.push(Buffer.from("ijkl")); // 12 > 10: the oldest whole chunk goes.
    expect(ring.start).toBe(4);
    expect(ring.end).toBe(12);
    expect(ring.since(3)).toBeNull();
    expect(text(ring.since(5))).toBe("fghijkl");
    expect(ring.since(13)).toBeNull();
  });

  it("keeps the newest chunk even when it alone is over the bound, and finds line starts", () => {
    const ring = new OutputRing(4);
    ring.push(Buffer.from("ab\ncd"));
    ring.push(Buffer.from("ef\ngh\n"));
    expect(ring.start).toBe(5);
    expect(ring.lineStartFrom(5)).toBe(8);
    expect(ring.lineStartFrom(9)).toBe(11);
    expect(ring.lineStartFrom(11)).toBe(11);
    ring.clear();
    expect(ring.end).toBe(11);
    expect(text(ring.since(11))).toBe("");
  });
});
