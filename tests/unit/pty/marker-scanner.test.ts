import { describe, expect, it } from "vitest";
import { markerScanner } from "../../integration/pty/pty-client";

const feed = (marker: string, chunks: string[]): boolean[] => {
  const scan = markerScanner(marker);
  return chunks.map((chunk) => scan(Buffer.from(chunk, "latin1")));
};

describe("markerScanner", () => {
  it("finds the marker when a prompt longer than 32 bytes follows it in the same chunk (bench/pty.ts hung on this)", () => {
    const body = "000999 it amet consectetur adipiscing elit ....\r\n".repeat(3000);
    const chunk = `${body}END-2\r\n\u001b[?2004hroot@vm:/tmp/wl-bench-pty-r2FTA3# `;
    expect(feed("END-2", [chunk])).toEqual([true]);
  });

  it("finds a marker split across chunks, down to one byte each", () => {
    expect(feed("END-2", ["xxxEN", "D-2yyy"])).toEqual([false, true]);
    expect(feed("END-2", ["E", "N", "D", "-", "2", "\r\n$ "])).toEqual([false, false, false, false, true, false]);
  });

  it("reports nothing for output without the marker, nor for the command's own echo", () => {
    expect(feed("END-2", ["cat big.txt; echo END-$((1+1))\r\n", "END-", "3"])).toEqual([false, false, false]);
  });
});
